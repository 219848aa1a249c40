"""The guard oracle: soundness and precision of the compiled cache under perturbations of the call plan.

The harness (harness/guards.py) runs each perturbation derived from the
reference guards and leaves the results in `obs.extra["guards"]`; this oracle
only judges them.

Soundness: after a change that violates a reference guard, the compiled result
and side effects must equal eager's; a difference where the compiled call
neither recompiled nor raised (or where an entry's guards still accept the
state) is a stale entry reused (`guard-unsound`, high). A difference after a
recompile is a miscompile of the new state, the other oracles' business.
Precision: after a change that violates none, nothing may recompile
(`over-guard`, low), reported with the guard text the compiler failed on.
"""
from __future__ import annotations

from typing import Any

from .model import Finding, Observations, finding
from .registry import oracle


@oracle("guards")
def guard_oracle(case: Any, obs: Observations, trace: Any) -> list[Finding]:
    out: list[Finding] = []
    for r in obs.extra.get("guards", ()):
        if r.note:
            continue
        stale = r.would_hit or not (r.recompiled or r.compiled_error)
        if r.violates is not None and r.diffs and stale:
            lacks = (f"; Dynamo's cache entry {r.would_hit} still accepts the changed state, so it lacks the guard "
                     f"{r.violates}") if r.would_hit else ""
            out.append(finding("guards", "guard-unsound",
                               f"stale compiled code after {r.name} (violates {r.violates}): {r.diffs[0]}{lacks}",
                               f"unsound:{r.kind}", severity="high", call=1,
                               details=(f"perturbation: {r.name}", f"reference guard: {r.violates}", *r.diffs)))
        elif r.violates is None and r.recompiled and r.failures:
            out.append(finding("guards", "over-guard",
                               f"recompiled after {r.name}, which violates no reference guard; failed on: "
                               f"{r.failures[0]}",
                               f"over:{r.kind}:{_guard_line(r.failures[0])}", severity="low", call=1,
                               details=(f"perturbation: {r.name}", *r.failures[:5])))
    return out


def _guard_line(text: str) -> str:
    """The failed guard itself: first line, without Dynamo's trailing source comment."""
    return text.splitlines()[0].split("#")[0].strip() if text else ""
