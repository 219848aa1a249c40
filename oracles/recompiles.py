"""Over-guarding: a call whose inputs and program state equal those of an earlier call must not recompile.

Eager semantics make such a call indistinguishable from the earlier one, so a
correct compiler can reuse the cache entry it built then. Any call that does
change something (a new shape, a Python int, a global, a tensor's strides, its
`_version`, aliasing between arguments) is left alone: Dynamo may legitimately
recompile there, e.g. once for automatic dynamic shapes. A recompile on a
repeat is a missed cache hit, not a wrong answer, so the finding is kind
`over-guard` at severity `low`, apart from miscompiles.
"""
from __future__ import annotations

from .model import CallRecord, Finding, Observations, finding
from .registry import oracle, renders
from .sections import section
from .snapshot import TensorSnap

COMPARED_ROOTS = ("args", "state")


def same_start(a: CallRecord, b: CallRecord) -> bool:
    """The two calls began from identical arguments and program state: metadata, values, aliasing."""
    if a.before is None or b.before is None:
        return False
    return all(identical(section(a.before, root), section(b.before, root)) for root in COMPARED_ROOTS)


def identical(x, y) -> bool:
    """Exact structural equality of two snapshots (floats and tensor values bit for bit, no tolerance).

    Guards compare Python floats exactly, so the value-tolerant `snapshot.diff`
    would call two starts equal that Dynamo rightly tells apart.
    """
    if isinstance(x, TensorSnap) or isinstance(y, TensorSnap):
        if not (isinstance(x, TensorSnap) and isinstance(y, TensorSnap)) or x.meta != y.meta:
            return False
        same_data = x.data.shape == y.data.shape and x.data.dtype == y.data.dtype and bool((x.data == y.data).all())
        return same_data and identical(x.grad, y.grad) and identical(x.attrs, y.attrs)
    if isinstance(x, (tuple, list)) and isinstance(y, (tuple, list)):
        return type(x) is type(y) and len(x) == len(y) and all(identical(p, q) for p, q in zip(x, y))
    if isinstance(x, float) and isinstance(y, float):
        return x == y or (x != x and y != y)
    return type(x) is type(y) and x == y


@oracle("recompiles")
def recompiles(case, obs: Observations, trace=None) -> list[Finding]:
    calls = obs.compiled.calls
    if obs.compiled.setup_error is not None or any(c.error or c.between_error for c in calls):
        return []
    for i in range(1, len(calls)):
        new_frames = calls[i].frames - calls[i - 1].frames
        if new_frames <= 0:
            continue
        for j in range(i):
            if same_start(calls[j], calls[i]):
                return [finding("recompiles", "over-guard",
                                f"call {i} compiled {new_frames} new frame(s) although its arguments and state "
                                f"equal those of call {j}", "recompile on identical re-call", severity="low",
                                call=i, details=(f"cumulative frames per call: {[c.frames for c in calls]}",))]
    return []


@renders("recompiles")
def render_recompiles_check(f: Finding, case=None) -> list[str]:
    """The re-call compiled new frames: `frames` holds the compiled frame count after each call."""
    i = f.call or 1
    return [f'assert frames[{i}] == frames[{i - 1}], f"call {i} recompiled although it repeats an earlier call: '
            f'compiled frames after each call {{frames}}"']
