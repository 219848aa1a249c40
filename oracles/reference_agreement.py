"""The reference self-check: the reference tracer must reproduce eager's outputs, errors and final state.

A disagreement is a bug in dynfuzz's tracer (kind `reference-bug`, severity
info), never a torch bug: the tracer is only trusted where this check passes.
"""
from __future__ import annotations

from typing import Any

from .model import Finding, Observation, Observations, finding
from .registry import oracle
from .snapshot import diff

_DYNAMO_RAN = ("torch._dynamo", "torch._higher_order_ops")


def check_reference(eager: Observation, trace: Any) -> list[Finding]:
    """Compare each call of the eager run with the same call interpreted by the reference tracer."""
    if trace is None or eager.setup_error is not None:
        return []
    out: list[Finding] = []
    if len(eager.calls) != len(trace.calls):
        return [finding("reference", "reference-bug", f"eager made {len(eager.calls)} calls, reference "
                        f"{len(trace.calls)}", "calls", severity="info")]
    for rec, ct in zip(eager.calls, trace.calls):
        got = type(ct.error).__name__ if ct.error is not None else None
        want = rec.error.type if rec.error is not None else None
        if rec.error is not None and rec.error.module.startswith(_DYNAMO_RAN):
            break  # eager torch.cond runs Dynamo itself; the reference models the plain-Python meaning
        if got != want:
            out.append(finding("reference", "reference-bug", f"call {rec.index}: eager raised {want}, reference {got}",
                               f"error:{want}:{got}", severity="info", call=rec.index,
                               details=(str(ct.error)[:300],)))
            break
        diffs = diff(rec.state, ct.state)
        if diffs:
            out.append(finding("reference", "reference-bug",
                               f"call {rec.index}: reference state differs from eager: {diffs[0]}",
                               f"state:{diffs[0]}", severity="info", call=rec.index, details=tuple(diffs[:10])))
            break
    return out


@oracle("reference")
def reference_oracle(case: Any, obs: Observations, trace: Any) -> list[Finding]:
    return check_reference(obs.eager, trace)
