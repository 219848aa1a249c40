"""Mutants placed below Dynamo: one breaks the AOTAutograd backend, one breaks an inductor lowering.

They prove that triangulation (harness/triage/layers.py) names the layer a bug lives in: Dynamo's graph
is correct under both, so the `eager` backend agrees with eager; only the backend built on the broken
layer diverges.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from . import mutant

BROKEN_AOT_EAGER = "dynfuzz_broken_aot_eager"


def _off_by_one(outputs: Any) -> Any:
    """The graph's outputs with 1 added to the first floating-point tensor (a wrong value, nothing else)."""
    import torch

    items = list(outputs) if isinstance(outputs, (list, tuple)) else [outputs]
    for i, value in enumerate(items):
        if isinstance(value, torch.Tensor) and value.is_floating_point() and value.numel():
            items[i] = value + 1
            break
    return type(outputs)(items) if isinstance(outputs, (list, tuple)) else items[0]


def broken_aot_eager(inner: Callable) -> Callable:
    """A backend that compiles with `inner` (aot_eager) and returns a callable whose first floating-point
    graph output is off by one."""

    def backend(gm, example_inputs, **kwargs):
        compiled = inner(gm, example_inputs, **kwargs)
        if getattr(compiled, "_boxed_call", False):
            def run_boxed(args):
                return _off_by_one(compiled(args))

            run_boxed._boxed_call = True
            return run_boxed

        def run(*args):
            return _off_by_one(compiled(*args))

        return run

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
