"""The `export` family: a program of the other families exported instead of compiled.

Its one fragment writes `COMPILE_OPTIONS = {"export": MODE}`: the harness (`dynfuzz.run.export_runner`) then
exports the entry at its one call's arguments through strict `torch.export`, `torch._dynamo.export` (with and
without `aten_graph`) or torch's precompile (`aot_compile`), paths `torch.compile` never runs.
"""
from __future__ import annotations

from ..builder import Builder
from ..fragments import fragment

# COMPILE_OPTIONS export modes: the program is exported at its call's arguments instead of compiled
# (harness/run/export_runner.py): strict torch.export, torch._dynamo.export with and without aten_graph, and
# torch.compile's precompile (`aot_compile`, which serializes every guard; tag `export-aot`).
EXPORT_MODES = ("strict", "dynamo", "dynamo-aten", "aot")


@fragment("export", "export", weight=12, nestable=False)
def export(draw, b: Builder) -> None:
    """Export this program instead of compiling it: one call, judged on its outputs and errors (first drawn
    wins). Export traces through Dynamo's export paths (one whole graph, a rewritten signature, lifted
    parameters and constants), which `torch.compile` never runs."""
    if "export" in b.compile_options:
        return
    if b.pick(draw, (True, False)):  # half the share: aot's guard serialization reaches more than one mode's worth
        b.compile_options["export"] = "aot"
        b.tag("export-aot")
    else:
        b.compile_options["export"] = b.pick(draw, EXPORT_MODES[:-1])
