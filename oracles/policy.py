"""Each backend's legitimate differences from eager, written down once: the oracles consult this table
instead of skipping things ad hoc.

A compiled run may differ from eager in ways its backend documents as allowed; reporting those would
bury the real miscompiles. Every allowance is a `Rule` here with the reason it is legitimate, the
backends and devices it covers, the snapshot roots and diff aspects it excuses, and the condition under
which it holds (tests/test_policy.py proves each one). Anything not excused here is a finding.

Tolerances follow the same idea: values computed by fused kernels (inductor) or on another device are
compared with the tolerance that backend and device promise, not the op-by-op eager one.

Pure: imports nothing of the harness; the facts a rule needs (did the program draw random numbers, the
inductor config the run used) come in `Observations.extra`, recorded by the harness that ran it.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .model import Observations
from .snapshot import tolerance as snapshot_tolerance

# Facts the harness records in Observations.extra for the rules below.
RNG_USED = "rng_used"  # bool: the eager run advanced the random number generator
BACKEND_CONFIG = "backend_config"  # dict: torch._inductor.config values the compiled run used
EXPORTED = "exported"  # str: the program was exported in this mode (COMPILE_OPTIONS export), not compiled


@dataclass(frozen=True)
class Rule:
    """One documented, legitimate difference: where it applies, what it excuses, and why."""

    name: str
    backends: frozenset[str]
    roots: frozenset[str]  # snapshot sections it covers: out, args, state, between
    aspects: frozenset[str]  # diff aspects it excuses: values, stride, view, storage, identity...
    reason: str
    holds: Callable[[Observations], bool] = lambda obs: True
    alongside: frozenset[str] = frozenset()  # when set: only where one of these also differs at the same path
    names: frozenset[str] = frozenset()  # for `attributes`: only when these are all the names that differ

    def covers(self, obs: Observations, root: str, aspect: str, others: frozenset[str] = frozenset(),
               expected: Any = None, actual: Any = None) -> bool:
        return (obs.backend in self.backends and root in self.roots and aspect in self.aspects
                and (not self.alongside or bool(self.alongside & others))
                and (not self.names or _differing_names(expected, actual) <= self.names) and self.holds(obs))


def _differing_names(expected: Any, actual: Any) -> set[str]:
    try:
        return set(expected) ^ set(actual)
    except TypeError:
        return {"<not a list of names>"}


def _config(obs: Observations, name: str, default: Any) -> Any:
    return obs.extra.get(BACKEND_CONFIG, {}).get(name, default)


def _rng_without_fallback(obs: Observations) -> bool:
    return bool(obs.extra.get(RNG_USED)) and not _config(obs, "fallback_random", False)


def _output_strides_free(obs: Observations) -> bool:
    return not _config(obs, "keep_output_stride", True)


RULES: tuple[Rule, ...] = (
    Rule("inductor-random-numbers", frozenset({"inductor"}), frozenset({"out", "args", "state", "between"}),
         frozenset({"values"}),
         "Inductor draws random numbers with its own Philox-based kernels (one seed per graph), not with "
         "eager's generator, so random values differ from eager unless torch._inductor.config.fallback_random "
         "is set; only the values are free, never shapes, dtypes or which state was written.",
         _rng_without_fallback),
    Rule("inductor-output-layout", frozenset({"inductor"}), frozenset({"out"}),
         frozenset({"stride", "contiguous", "offset"}),
         "With torch._inductor.config.keep_output_stride off, inductor chooses the memory layout of the "
         "outputs it computes; only their sizes and values are promised.",
         _output_strides_free),
    Rule("inductor-output-aliasing", frozenset({"inductor"}), frozenset({"out"}),
         frozenset({"view", "storage", "identity"}),
         "Inductor computes an output that eager returned as a view of an intermediate (or as one more "
         "reference to another output) into a fresh buffer: whether an output is a view, which storage it "
         "shares with other outputs, and object identity between outputs are not preserved. Aliasing of "
         "program-visible state (arguments, globals) is not covered and stays a finding."),
    Rule("inductor-fresh-buffer-layout", frozenset({"inductor"}), frozenset({"out"}),
         frozenset({"offset", "stride", "contiguous"}),
         "An output inductor materialized into a fresh buffer instead of eager's view (the rule above) has "
         "the buffer's own offset and strides; excused only at a path whose view or storage also differs.",
         alongside=frozenset({"view", "storage"})),
    Rule("aot-autograd-dynamic-dims-marker", frozenset({"aot_eager", "inductor"}),
         frozenset({"out", "args", "state", "between"}), frozenset({"attributes"}),
         "AOTAutograd stamps `_dynamo_propagated_dynamic_indices` on outputs whose sizes it traced as symbolic "
         "(runtime_wrappers.mark_dynamo_propagated_dynamic_indices): a compiler-internal, unguarded hint for "
         "the next graph. Only that one extra attribute name is excused; any other attribute difference, or a "
         "missing attribute, stays a finding.",
         names=frozenset({"_dynamo_propagated_dynamic_indices"})),
    Rule("dynamo-static-address-marker", frozenset({"eager", "aot_eager", "inductor"}),
         frozenset({"out", "args", "state", "between"}), frozenset({"attributes"}),
         "Dynamo marks the parameters and buffers of the nn.Modules it traces as static inputs "
         "(builder.py calls decorators.mark_static_address, which sets `_dynamo_static_input_type`), a hint for "
         "cudagraphs. Only that one extra attribute name is excused.",
         names=frozenset({"_dynamo_static_input_type"})),
    Rule("export-autograd-metadata", frozenset({"eager", "aot_eager", "inductor"}), frozenset({"out"}),
         frozenset({"requires_grad", "is_leaf", "view", "storage", "identity"}),
         "An exported program (COMPILE_OPTIONS export) is judged on its output values only (run/export_runner.py): "
         "export keeps a custom autograd.Function's forward alone, run without grad as eager runs it, and its "
         "graph returns fresh tensors, so whether an output requires grad, is a leaf, a view, or the very "
         "object eager returned are not export's promise.",
         lambda obs: bool(obs.extra.get(EXPORTED))),
    Rule("cross-device-placement", frozenset({"eager", "aot_eager", "inductor"}),
         frozenset({"out", "args", "state", "between"}), frozenset({"device"}),
         "Compared across devices (--cross-device: a CUDA run against CPU eager), every tensor lives on "
         "its own run's device by construction; values are compared with the cross-device tolerances.",
         lambda obs: bool(obs.extra.get("cross_device"))),
    Rule("cross-device-random-numbers", frozenset({"eager", "aot_eager", "inductor"}),
         frozenset({"out", "args", "state", "between"}), frozenset({"values"}),
         "CUDA and the CPU have separate random number generators (Philox on CUDA, Mersenne Twister on the "
         "CPU), so a program that draws random numbers gets other values on each device.",
         lambda obs: bool(obs.extra.get("cross_device")) and bool(obs.extra.get(RNG_USED))),
)


def rule_for(obs: Observations, root: str, aspect: str, others: frozenset[str] = frozenset(),
             expected: Any = None, actual: Any = None) -> Rule | None:
    """The rule that excuses a difference in `aspect` (from `expected` to `actual`) under snapshot root
    `root`, where the aspects `others` differ at the same path too; None if no rule does."""
    return next((r for r in RULES if r.covers(obs, root, aspect, others, expected, actual)), None)


def root_of(path: str) -> str:
    """`out[0].foo` -> `out`: the snapshot section a diff path lies in."""
    for i, ch in enumerate(path):
        if ch in "[.":
            return path[:i]
    return path


def screen(obs: Observations, diffs: list) -> list:
    """`diffs` without those a rule excuses (same container type, so `Diffs.kinds` is kept)."""
    at: dict[str, set[str]] = {}
    for path, aspect, *_ in diffs:
        at.setdefault(path, set()).add(aspect)
    kept = type(diffs)()
    kept.extend(d for d in diffs if rule_for(obs, root_of(d[0]), d[1], frozenset(at[d[0]]), d[2], d[3]) is None)
    if hasattr(diffs, "kinds"):
        kept.kinds.update(diffs.kinds)
    return kept


# ---- tolerances ----

# (rtol, atol) by dtype name. Eager, aot_eager: snapshot.tolerance, the op-by-op default.
# Inductor fuses pointwise chains and reductions and keeps fp16/bf16 intermediates in float32, so it
# rounds less often than eager: a few units in the last place of the output dtype, more for half types.
_FUSED = {"float16": (2e-2, 2e-2), "bfloat16": (4e-2, 4e-2), "float32": (1e-3, 1e-4),
          "complex64": (1e-3, 1e-4), "float64": (1e-6, 1e-7), "complex128": (1e-6, 1e-7)}
# CUDA against CPU: different libm and reduction orders, and TF32 for cuDNN convolutions by default.
_CROSS_DEVICE = {"float16": (2e-2, 2e-2), "bfloat16": (4e-2, 4e-2), "float32": (1e-3, 1e-3),
                 "complex64": (1e-3, 1e-3), "float64": (1e-6, 1e-7), "complex128": (1e-6, 1e-7)}


def tolerance(dtype: Any, backend: str = "eager", cross_device: bool = False) -> tuple[float, float]:
    """(rtol, atol) for values of `dtype` (a torch.dtype or its name) computed by `backend`, or on another
    device than the reference when `cross_device`; integers and bools are compared exactly."""
    name = str(dtype).replace("torch.", "")
    if cross_device:
        return _CROSS_DEVICE.get(name, (0.0, 0.0))
    if backend == "inductor":
        return _FUSED.get(name, (0.0, 0.0))
    import torch

    return snapshot_tolerance(getattr(torch, name, None))


def tolerance_for(obs: Observations) -> Callable[[Any], tuple[float, float]]:
    """The tolerance function for this run (what `snapshot.Diffs(tolerance=...)` takes)."""
    cross = obs.extra.get("cross_device", False)
    return lambda dtype: tolerance(dtype, obs.backend, cross)


def describe_rules() -> list[str]:
    """One line per rule, for `--help`-style listings and the report."""
    return [f"{r.name} ({', '.join(sorted(r.backends))}): {r.reason}" for r in RULES]
