"""Where a triage job's time goes: seconds and judge calls per phase (re-judge, Hypothesis shrink, source
reduction, explanation, layer triangulation, localization, verification).

`triage_one` fills one `Phases` per job; `summary.json` keeps each bucket's total and `bench/minimize.py`
prints the split, so a change that makes triage cheaper is measured where the time actually went.
"""
from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

ORDER = ("rejudge", "shrink", "reduce", "explain", "triangulate", "localize", "verify")


@dataclass
class Phases:
    """Seconds and judge calls by phase name, accumulated."""

    seconds: dict[str, float] = field(default_factory=dict)
    calls: dict[str, int] = field(default_factory=dict)

    @contextmanager
    def phase(self, name: str) -> Iterator[None]:
        start = time.perf_counter()
        try:
            yield
        finally:
            self.seconds[name] = self.seconds.get(name, 0.0) + time.perf_counter() - start

    def count(self, name: str, calls: int = 1) -> None:
        self.calls[name] = self.calls.get(name, 0) + calls

    @property
    def total(self) -> float:
        return sum(self.seconds.values())

    def as_dict(self) -> dict[str, dict[str, float | int]]:
        """`{"seconds_by_phase": {...}, "calls_by_phase": {...}}` in pipeline order, rounded (summary.json, bench)."""
        names = [n for n in ORDER if n in self.seconds or n in self.calls] + \
            sorted((set(self.seconds) | set(self.calls)) - set(ORDER))
        return {"seconds_by_phase": {n: round(self.seconds.get(n, 0.0), 3) for n in names},
                "calls_by_phase": {n: self.calls.get(n, 0) for n in names}}
