"""Outputs: values (dtype-aware tolerance, NaN-equal), shape, stride, dtype, device, requires_grad,
and aliasing of outputs to inputs and to each other (identity and shared storage)."""
from __future__ import annotations

import re

from .model import Finding, Observations, finding
from .registry import oracle
from .sections import section
from .snapshot import diff

_INDEX = re.compile(r"\[[^\]]*\]")


def describe(diffs) -> list[str]:
    return [f"{path or '<root>'}: {aspect}: expected {exp!r}, got {act!r}" for path, aspect, exp, act in diffs]


def diff_key(diffs) -> str:
    """What differs, without where exactly: aspects and path shapes, sorted (stable across programs)."""
    return " ".join(sorted({f"{_INDEX.sub('[]', path)}:{aspect}" for path, aspect, _, _ in diffs}))


@oracle("outputs")
def outputs(case, obs: Observations, trace=None) -> list[Finding]:
    found: list[Finding] = []
    for e_call, c_call in zip(obs.eager.calls, obs.compiled.calls):
        if e_call.error or c_call.error:
            continue
        diffs = diff(section(e_call.state, "out"), section(c_call.state, "out"), "out")
        if diffs:
            i = e_call.index
            aspects = sorted({aspect for _, aspect, _, _ in diffs})
            found.append(finding("outputs", "miscompile", f"call {i}: {diffs[0][0]} {', '.join(aspects)} differ",
                                 diff_key(diffs), call=i, details=tuple(describe(diffs))))
            break  # later calls usually repeat the same divergence
    return found
