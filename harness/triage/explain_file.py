"""`dynfuzz explain FILE.py`: minimize, explain and localize one saved or hand-written program, and print the
bucket key a campaign would file it under, its cause line, tier and suspects.

Bounded by judge calls (minimization, ablation, the neighbours localization judges), as a campaign's triage
is in everything that decides a key, so the key is the one a campaign would file that program under on any
machine. Seconds are only a backstop: when the backstop stops minimization, the key may differ from a
campaign's and `stable` says so.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dynfuzz.errors import UsageError
from dynfuzz.run.compilers import CompileSpec, make_compiler
from dynfuzz.triage.buckets import tier_of


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


def spec_of(meta: dict[str, Any]) -> CompileSpec:
    """The compile settings a saved program's metadata names (defaults for a hand-written one)."""
    return CompileSpec(meta.get("compiler", "torch"), meta.get("backend", "eager"), meta.get("device", "cpu"),
                       bool(meta.get("fullgraph", False)), meta.get("dynamic"))


def explain_file(path: Path, spec_for_meta: Any, backstop: float = 600.0,
                 localize_too: bool = True) -> Explained | None:
    """None when the program does not diverge; else the key, cause, tier and suspects. The finding is chosen as
    `dynfuzz known` chooses it (the file's own signature, else the most severe), then triaged by exactly the code
    campaign triage runs (`explain.identify`) and filed as the campaign files it (`explain.filed`)."""
    from dynfuzz.run.judge import judge
    from dynfuzz.triage.explain import filed, identify
    from dynfuzz.triage.known import choose_finding
    from dynfuzz.triage.localize import localize, wants_localization
    from dynfuzz.triage.minimize import program_lines
    from dynfuzz.triage.repro import read_program

    start = time.monotonic()
    saved = read_program(path)
    spec: CompileSpec = spec_for_meta(saved.meta)
    compiler = make_compiler(spec)
    findings = judge(saved.case, compiler, spec).findings
    if not findings:
        return None
    finding = choose_finding(findings, {"signature": saved.meta.get("signature")} if saved.meta.get("signature")
                             else {})
    try:
        found = identify(saved.case, finding, spec, backstop, compiler=compiler)
    except UsageError:
        return None
    explanation = found.explanation
    suspects: list[dict[str, Any]] = []
    if localize_too and wants_localization(explanation):
        suspects = localize(found.case, found.finding, spec).suspects
    explanation = filed(saved.case, finding, explanation)
    return Explained(explanation.key, explanation.cause, tier_of(explanation.cls), suspects, found.stable,
                     program_lines(found.case.source), time.monotonic() - start)
