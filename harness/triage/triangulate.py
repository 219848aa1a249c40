"""Which layer broke: re-run a (minimized) failing program on each backend and name the first that diverges.

PyTorch engineers localize a torch.compile bug by re-running it with `backend="eager"` (Dynamo's graph
capture only), `"aot_eager"` (adds AOTAutograd: functionalization, decompositions, the partitioner) and
`"inductor"` (adds code generation). Each backend stacks one layer on the previous one, so the first
backend whose run diverges from uncompiled eager names the guilty layer. `triangulate` does exactly
that, records every backend's verdict, and on CUDA also says whether the bug needs the GPU.

`static_rerun` is the other re-run PyTorch's triage rubric asks for: the program compiled with `dynamic=False`.
A failure that goes away then belongs to `module: dynamic shapes` (triage/issue.py).
"""
from __future__ import annotations

import ast
import dataclasses
import time
from dataclasses import dataclass, field

from dynfuzz.generators.case import Case
from dynfuzz.oracles import Finding
from dynfuzz.run.compilers import BACKENDS, CompileSpec
from dynfuzz.run.judge import judge
from dynfuzz.run.multi_backend import compiler_for, layer_of

AGREES = "agrees"
REPRODUCES = "reproduces"
NOT_RUN = "not run"  # stop_at_first: an earlier layer already diverges
UNLOCATED = "none"  # no backend reproduces it when re-run (flaky, or needs the original flags)
UNTRIANGULATED = ("harness",)  # dynfuzz's own crash/hang/error findings have no compiler layer

_SENTENCES = {
    "dynamo": "Diverges already with backend=eager: Dynamo's graph capture (graph, guards or side effects) "
              "is wrong.",
    "aot_eager": "Dynamo alone is fine; diverges from aot_eager on: AOTAutograd (functionalization, "
                 "decompositions, partitioning).",
    "inductor": "Dynamo and AOTAutograd are fine; diverges from inductor on: inductor's lowering or generated "
                "code, or what Dynamo does only for inductor (such as unspecialized float inputs).",
    "cross-device": "The compiled CUDA run agrees with CUDA eager but differs from CPU eager beyond the "
                    "cross-device tolerances.",
    UNLOCATED: "Does not diverge on any backend when re-run.",
}


def _diverges(verdict_text: str) -> bool:
    return verdict_text not in (AGREES, NOT_RUN) and not verdict_text.startswith("error")


def layer_sentence(layer: str) -> str:
    """What a layer name (a `Layering.tag`) means for the reader of a repro or report ("Dynamo alone is
    fine; ...")."""
    name, _, device = layer.partition("/")
    text = _SENTENCES.get(name, f"First diverges on layer {name}.")
    return text + (f" Needs {device.upper()}: the CPU run agrees." if device else "")


@dataclass(frozen=True)
class Layering:
    """The first diverging layer, each backend's verdict, and which device the divergence needs."""

    layer: str  # dynamo, aot_eager, inductor, or `none`
    verdicts: dict[str, str]  # backend -> agrees | reproduces | diverges: <other finding> | error: <why>
    device: str = "any"  # `cuda` when it diverges on CUDA but not on the CPU
    seconds: float = 0.0
    extra: dict[str, str] = field(default_factory=dict)

    @property
    def tag(self) -> str:
        """The layer, with the device it needs when the CPU does not show it (`inductor/cuda`): the form
        a bucket key and a repro's metadata carry."""
        return self.layer if self.device == "any" else f"{self.layer}/{self.device}"

    @property
    def sentence(self) -> str:
        return layer_sentence(self.tag)

    def as_dict(self) -> dict[str, object]:
        return {"layer": self.layer, "tag": self.tag, "verdicts": dict(self.verdicts), "device": self.device,
                "sentence": self.sentence, "seconds": round(self.seconds, 3)}


def verdict(case: Case, finding: Finding, spec: CompileSpec, backend: str, device: str | None = None) -> str:
    """How `case` fares on one backend (and device) against uncompiled eager, judged by the finding's oracle."""
    run_spec = dataclasses.replace(spec, backend=backend, device=device or spec.device, backends=(),
                                   cross_device=False, reference=False, guards=False)
    try:
        result = judge(case, compiler_for(run_spec, backend), run_spec, only=(finding.oracle,))
    except Exception as e:  # dynfuzz's own failure: recorded, never a verdict about torch
        return f"error: {type(e).__name__}: {e}"[:200]
    if any(f.signature == finding.signature for f in result.findings):
        return REPRODUCES
    if result.findings:
        return f"diverges: {result.findings[0].title}"[:200]
    return AGREES


def triangulate(case: Case, finding: Finding, spec: CompileSpec, backends: tuple[str, ...] = BACKENDS,
                stop_at_first: bool = False) -> Layering:
    """Run `case` on each backend in layer order against eager and name the first layer that diverges.

    A backend counts as diverging when its run reproduces the finding or shows another divergence of the
    same oracle (a bug can show a slightly different symptom in another layer). `stop_at_first` skips the
    backends after the first that diverges (their verdict is `not run`): the layer is settled by then, and
    an inductor compile costs seconds. On CUDA, the guilty layer is re-run on the CPU too: when the CPU
    agrees the finding needs CUDA."""
    start = time.perf_counter()
    if finding.oracle in UNTRIANGULATED:
        return Layering(UNLOCATED, {}, spec.device, 0.0, {"why": "a dynfuzz harness finding has no layer"})
    verdicts: dict[str, str] = {}
    for backend in backends:
        if stop_at_first and any(_diverges(v) for v in verdicts.values()):
            verdicts[backend] = NOT_RUN
        else:
            verdicts[backend] = verdict(case, finding, spec, backend)
    first = next((b for b in backends if _diverges(verdicts[b])), None)
    layer = layer_of(first) if first else UNLOCATED
    device = "any"
    if first and spec.device != "cpu":
        on_cpu = verdict(case, finding, spec, first, device="cpu")
        verdicts[f"{first}@cpu"] = on_cpu
        device = spec.device if on_cpu == AGREES else "any"
    return Layering(layer, verdicts, device, time.perf_counter() - start)


def without_dynamic(source: str) -> str | None:
    """The program with `dynamic=False` in its COMPILE_OPTIONS (which outrank the spec's), or None when it
    has no `dynamic` to turn off: it exports, or already compiles with `dynamic=False`."""
    tree = ast.parse(source)
    for node in tree.body:
        if isinstance(node, ast.Assign) and [ast.unparse(t) for t in node.targets] == ["COMPILE_OPTIONS"]:
            try:
                options = dict(ast.literal_eval(node.value))
            except ValueError:
                return None
            if "export" in options or options.get("dynamic") is False:
                return None
            node.value = ast.parse(repr({**options, "dynamic": False}), mode="eval").body
            return ast.unparse(tree) + "\n"
    return source.rstrip("\n") + "\n\n\nCOMPILE_OPTIONS = {'dynamic': False}\n"


def static_rerun(case: Case, finding: Finding, spec: CompileSpec) -> str | None:
    """`agrees` when the finding goes away with `dynamic=False` (no finding of its oracle), `reproduces` when it
    stays, `diverges: ...` for another symptom; None where the re-run says nothing: a double, a harness
    finding, a recompile count (which `dynamic=False` changes by design), a program that exports or is static
    already."""
    if spec.compiler != "torch" or spec.dynamic is False or finding.oracle in (*UNTRIANGULATED, "recompiles"):
        return None
    source = without_dynamic(case.source)
    if source is None:
        return None
    static = dataclasses.replace(case, source=source, choices=())
    return verdict(static, finding, dataclasses.replace(spec, dynamic=False), spec.backend)
