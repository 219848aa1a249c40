"""Mutants placed below Dynamo: one breaks the AOTAutograd backend, one breaks an inductor lowering.

They prove that triangulation (harness/triage/triangulate.py) names the layer a bug lives in: Dynamo's graph
is correct under both, so the `eager` backend agrees with eager; only the backend built on the broken
layer diverges.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from . import mutant

BROKEN_AOT_EAGER = "dynfuzz_broken_aot_eager"


def _off_by_one(gm: Any) -> Any:
    """`gm` with 1 added to its first floating-point tensor output (a wrong value, nothing else)."""
    import torch

    output = next(n for n in gm.graph.nodes if n.op == "output")
    results = output.args[0]
    items = list(results) if isinstance(results, (list, tuple)) else [results]
    for i, node in enumerate(items):
        value = node.meta.get("example_value") if isinstance(node, torch.fx.Node) else None
        if isinstance(value, torch.Tensor) and value.is_floating_point():
            with gm.graph.inserting_before(output):
                items[i] = gm.graph.call_function(torch.add, (node, 1))
            output.args = (type(results)(items) if isinstance(results, (list, tuple)) else items[0],)
            gm.recompile()
            break
    return gm


def broken_aot_eager(inner: Callable) -> Callable:
    """A backend that hands `inner` (aot_eager) Dynamo's graph with its first floating-point output off by
    one: what the backend compiles and runs is wrong, the graph Dynamo captured is not."""

    def backend(gm, example_inputs, **kwargs):
        return inner(_off_by_one(gm), example_inputs, **kwargs)

    return backend


@mutant("aot-eager-wrong-output", layer="aot_eager", construct="compute")
def aot_eager_wrong_output() -> None:
    """The `aot_eager` backend (and `dynfuzz_broken_aot_eager`, registered beside it) returns its first
    floating-point graph output plus one: AOTAutograd's compiled code is wrong, Dynamo's graph is not."""
    from torch._dynamo.backends import registry

    original = registry.lookup_backend("aot_eager")
    broken = broken_aot_eager(original)
    registry._COMPILER_FNS["aot_eager"] = broken
    if BROKEN_AOT_EAGER not in registry._COMPILER_FNS:
        registry.register_backend(broken, name=BROKEN_AOT_EAGER, tags=("debug",))


@mutant("inductor-tanh-lowering", layer="inductor", construct="compute")
def inductor_tanh_lowering() -> None:
    """Inductor lowers `aten.tanh` to `-tanh`: the generated kernel is wrong, the FX graph handed to
    inductor is not. Inductor's on-disk caches are switched off so a kernel compiled before the patch
    is not served instead."""
    import torch
    import torch._functorch.config as functorch_config
    import torch._inductor.config as inductor_config
    from torch._inductor import lowering

    for config, name in ((inductor_config, "fx_graph_cache"), (functorch_config, "enable_autograd_cache")):
        if hasattr(config, name):
            setattr(config, name, False)
    aten = torch.ops.aten
    original = lowering.lowerings[aten.tanh.default]
    neg = lowering.lowerings[aten.neg.default]

    def negated_tanh(x):
        return neg(original(x))

    for key in [k for k, v in lowering.lowerings.items() if v is original]:
        lowering.lowerings[key] = negated_tanh
