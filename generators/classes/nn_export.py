"""torch.nn under Dynamo's export path with specialised modules: a global module that holds Sequential,
ModuleList and ModuleDict containers, reached into from the frame, and the program exported through
`torch._dynamo.export` with `install_free_tensors_for_export=False`.

Under `torch.compile`, and under export with its default settings, torch 2.13 traces every module as an
object whose Python code it inlines (`UnspecializedNNModuleVariable`). With free tensors off, export still
keys each module reached from a global by its path and models it directly (`NNModuleVariable`): calls,
attribute reads, indexing and slicing of containers, their iteration and the `parameters()` family each
have their own handler there. No other setting of torch 2.13 runs that code. The flag is a documented
switch of export's ("install free tensors ... for export"), so an exported graph that computes something
else than the eager frame is a torch bug (corpus/export_specialized_functional_call_ignores_override.py).
Strict `torch.export` is not drawn: it refuses a module reached from a global with a KeyError (an open
upstream issue, pytorch#165641), which would hide everything else.
"""
from __future__ import annotations

from ..builder import Builder
from ..choose import choose, integer
from ..fragments import fragment
from .common import FAMILY, helper, operand, place, result
from .nn import CONTAINER_USES, CONTAINERS

SPECIALIZED = {"install_free_tensors_for_export": False}
# What the frame does with the module `$M`, given a tensor `$T` of its width: CONTAINER_USES but `in` (which
# the specialised path refuses: a graph break, so export would skip the program), and the parameter and
# module walks and container protocols that the specialised path answers itself.
WALKS = tuple(u for u in CONTAINER_USES if "' in $M" not in u) + (
    "$T * sum(1 for n, p in $M.named_parameters() if n.endswith('weight'))",
    "$T + sum(p.mean() for p in $M.parameters())",
    "$T * len(list($M.children())) + len(list($M.modules()))",
    "$T + sum(b.sum() for _, b in $M.named_buffers())",
    "$T * sum(1 for name, _ in $M.heads.items() if name in ('a', 'c'))",
    "$T * len($M.seq) + $M.seq[1:]($M.seq[0]($T))",
    "$M.layers[-1]($T) * len($M.heads) + $T * len(list($M.heads.keys()))",
    "$T * sum(1 for _ in $M.named_modules())",
    "$M.seq($T) + $M.heads['a'].bias",
)



@fragment(FAMILY, "classes", "nn-export-specialized", "export", weight=6, nestable=False)
def nn_export_specialized(draw, b: Builder) -> None:
    """A global module of containers used 1-3 ways from the frame, the program exported by
    `torch._dynamo.export` (with or without aten_graph) with free tensors off (first export drawn wins)."""
    if "export" in b.compile_options:
        return
    t, var, _ = operand(draw, b, vector=True)
    cls = b.fresh("Holder")
    helper(b, CONTAINERS, C=cls)
    m = place(b, "global", f"{cls}({var.shape[-1]})", "spec")
    uses = [choose(draw, WALKS) for _ in range(integer(draw, 1, 3))]
    text = " + ".join(f"torch.tanh({u})" for u in uses).replace("$M", m).replace("$T", f"torch.tanh({t})")
    result(b, text, var.shape, 3.0, grad=True)
    b.compile_options["export"] = choose(draw, ("dynamo", "dynamo-aten"))
    b.dynamo_config.update(SPECIALIZED)
