"""`dynfuzz explain FILE.py`: minimize, explain and localize one saved or hand-written program, and print the
bucket key a campaign would file it under, its cause line, tier and suspects.

Bounded by judge calls (minimization, ablation, the neighbours localization judges), as a campaign's triage
is in everything that decides a key, so the key is the one a campaign would file that program under on any
machine. Seconds are only a backstop: when the backstop stops minimization, the key may differ from a
campaign's and `stable` says so.
"""
from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dynfuzz.errors import UsageError
from dynfuzz.run.compilers import CompileSpec, make_compiler
from dynfuzz.triage.buckets import tier_of

MAX_MINIMIZE_CALLS = 400  # judge calls minimization may use (Hypothesis's shrink and the source reducer)


@dataclass
class Explained:
    """What `dynfuzz explain` prints (and `--json` writes)."""

    key: str
    cause: str
    tier: str
    suspects: list[dict[str, Any]] = field(default_factory=list)
    stable: bool = True
    minimized_lines: int = 0
    seconds: float = 0.0

    def as_json(self) -> dict[str, Any]:
        return {"key": self.key, "cause": self.cause, "tier": self.tier, "suspects": self.suspects,
                "stable": self.stable, "minimized_lines": self.minimized_lines, "seconds": round(self.seconds, 2)}


def explain_file(path: Path, spec_for_meta: Any, backstop: float = 600.0,
                 localize_too: bool = True) -> Explained | None:
    """None when the program does not diverge; else the key, cause, tier and suspects."""
    from dynfuzz.triage.explain import cheap_explanation, explain
    from dynfuzz.triage.localize import localize, wants_localization
    from dynfuzz.triage.minimize import minimize, program_lines
    from dynfuzz.triage.repro import read_program

    start = time.monotonic()
    saved = read_program(path)
    spec: CompileSpec = spec_for_meta(saved.meta)
    try:
        m = minimize(saved.case, spec, backstop, saved.meta.get("signature"), max_calls=MAX_MINIMIZE_CALLS)
    except UsageError:
        return None
    stable = not m.timed_out
    explanation = explain(m.case, m.finding, spec, make_compiler(spec))
    suspects: list[dict[str, Any]] = []
    if localize_too and wants_localization(explanation):
        loc = localize(m.case, m.finding, spec)
        suspects = loc.suspects
        if loc.locus and explanation.ablated:
            explanation = dataclasses.replace(explanation, locus=loc.locus)
    if explanation.unexplained:
        explanation = dataclasses.replace(cheap_explanation(m.case, m.finding), layer=explanation.layer)
    return Explained(explanation.key, explanation.cause, tier_of(explanation.cls), suspects, stable,
                     program_lines(m.case.source), time.monotonic() - start)
