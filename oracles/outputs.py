"""Outputs: values (dtype-aware tolerance, NaN-equal), shape, stride, dtype, device, requires_grad,
and aliasing of outputs to inputs and to each other (identity and shared storage)."""
from __future__ import annotations

import re

from .checks import diff_check
from .model import Finding, Observations, finding, paired_calls
from .policy import screen, tolerance_for
from .registry import oracle, renders
from .sections import section
from .snapshot import Diffs, diff, without_grads

_INDEX = re.compile(r"\[[^\]]*\]")


def describe(diffs) -> list[str]:
    return [f"{path or '<root>'}: {aspect}: expected {exp!r}, got {act!r}" for path, aspect, exp, act in diffs]


PLAN_TAG_PREFIXES = ("plan-", "probe-")


def diff_key(diffs, case=None, call: int = 0) -> str:
    """What differs, without where exactly: aspects and path shapes, sorted (stable across programs).

    A divergence that first shows on a re-call is a missing or stale guard; which call-plan
    perturbation preceded it (the case's `plan-*`/`probe-*` tags) tells such bugs apart.
    """
    kinds = getattr(diffs, "kinds", {})
    key = " ".join(sorted({f"{_INDEX.sub('[]', path)}:{aspect}" + (f"@{kinds[path]}" if path in kinds else "")
                           for path, aspect, _, _ in diffs}))
    if call > 0:
        plan = sorted(t for t in getattr(case, "tags", ()) if t.startswith(PLAN_TAG_PREFIXES))
        key += " | on re-call after " + (" ".join(plan) or "an unchanged call plan")
    return key


@oracle("outputs")
def outputs(case, obs: Observations, trace=None) -> list[Finding]:
    found: list[Finding] = []
    for e_call, c_call in paired_calls(obs):  # Note [Later calls follow the first divergence]
        if e_call.error or c_call.error:
            continue
        if getattr(case, "intended_error", None):
            break  # illegal-on-purpose programs are judged by the `illegal` oracle
        diffs = screen(obs, without_grads(diff(section(e_call.state, "out"), section(c_call.state, "out"), "out",
                                               Diffs(tolerance_for(obs)), limit=200)))
        if diffs:
            i = e_call.index
            aspects = sorted({aspect for _, aspect, _, _ in diffs})
            found.append(finding("outputs", "miscompile", f"call {i}: {diffs[0][0]} {', '.join(aspects)} differ",
                                 diff_key(diffs, case, i), call=i, details=tuple(describe(diffs))))
            break  # later calls usually repeat the same divergence
    return found


@renders("outputs")
def render_outputs_check(f: Finding, case=None) -> list[str]:
    """Assert the first output aspect that differed."""
    return diff_check(f)
