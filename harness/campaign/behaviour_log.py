"""A campaign's record of Dynamo's behaviours (run/behaviours.py): which were reached, when, how often, which
pairs of them met in one case, and which of the reachable universe were never reached.

`BehaviourLog.add()` takes one case's behaviours and returns its `Novelty` (new behaviours, new pairs, and
how rare its behaviours are so far), which `--guided` rewards. `summary()` is summary.json's `behaviours`
block (docs/summary-json.md).
"""
from __future__ import annotations

import itertools
import math
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from dynfuzz.run.behaviours import CLOSED, by_category, universe_key

MAX_PAIRS = 2_000_000  # distinct pairs kept (about 150 MB); beyond, new pairs are counted, not stored
MAX_TIMELINE = 400


@dataclass(frozen=True)
class Novelty:
    """What one case added: behaviours no earlier case had, pairs no earlier case had, and `rarity`, the sum
    over its behaviours of 1 / (cases that had it, this one included)."""

    singles: tuple[str, ...] = ()
    pairs: int = 0
    rarity: float = 0.0
    size: int = 0


@dataclass
class BehaviourLog:
    counts: Counter[str] = field(default_factory=Counter)  # cases per behaviour
    first: dict[str, tuple[int, float]] = field(default_factory=dict)  # behaviour -> (case number, seconds)
    ids: dict[str, int] = field(default_factory=dict)
    pair_counts: dict[int, int] = field(default_factory=dict)
    pairs_overflow: int = 0
    cases: int = 0  # cases that reported behaviours
    timeline: list[tuple[int, float, int, int]] = field(default_factory=list)  # (cases, seconds, singles, pairs)
    observers: set[str] = field(default_factory=set)
    _universe: dict[str, Any] | None = None

    def add(self, behaviours: tuple[str, ...] | list[str], seconds: float = 0.0,
            observers: tuple[str, ...] = ()) -> Novelty:
        """Count one case's behaviours; return its novelty."""
        self.cases += 1
        self.observers.update(observers)
        new = tuple(b for b in behaviours if b not in self.counts)
        for b in new:
            self.first[b] = (self.cases, round(seconds, 2))
            self.ids[b] = len(self.ids)
        self.counts.update(behaviours)
        rarity = sum(1.0 / self.counts[b] for b in behaviours)
        new_pairs = self._add_pairs(sorted(self.ids[b] for b in behaviours))
        if new or new_pairs:
            self._sample(seconds)
        return Novelty(new, new_pairs, rarity, len(behaviours))

    def _add_pairs(self, ids: list[int]) -> int:
        new = 0
        pairs = self.pair_counts
        for a, b in itertools.combinations(ids, 2):
            key = a << 24 | b
            n = pairs.get(key)
            if n is not None:
                pairs[key] = n + 1
            elif len(pairs) < MAX_PAIRS:
                pairs[key] = 1
                new += 1
            else:
                self.pairs_overflow += 1
                new += 1
        return new

    def pair_rarity(self, behaviours: tuple[str, ...] | list[str]) -> float:
        """Sum over the case's pairs of 1 / (cases that had the pair): high for a case whose behaviours
        rarely meet."""
        ids = sorted(self.ids[b] for b in behaviours if b in self.ids)
        return sum(1.0 / self.pair_counts.get(a << 24 | b, 1) for a, b in itertools.combinations(ids, 2))

    @property
    def distinct_pairs(self) -> int:
        return len(self.pair_counts) + self.pairs_overflow

    def _sample(self, seconds: float) -> None:
        self.timeline.append((self.cases, round(seconds, 2), len(self.counts), self.distinct_pairs))
        if len(self.timeline) > MAX_TIMELINE:  # keep the first and last, every other one between
            self.timeline = self.timeline[:1] + self.timeline[1:-1:2] + self.timeline[-1:]

    def universe(self) -> dict[str, Any]:
        """The running torch's universe (computed once: it imports Dynamo's variable modules)."""
        if self._universe is None:
            from dynfuzz.run.behaviours import full_universe, out_of_reach

            full = full_universe()
            self._universe = {"full": full, "excluded": {c: {n: out_of_reach(c, n) for n in names
                                                             if out_of_reach(c, n)} for c, names in full.items()}}
        return self._universe

    def summary(self, with_universe: bool = True) -> dict[str, Any]:
        out: dict[str, Any] = {
            "cases": self.cases, "distinct": len(self.counts), "pairs": self.distinct_pairs,
            "by_category": by_category(self.counts),
            "reached": {b: [n, *self.first[b]] for b, n in sorted(self.counts.items())},
            "timeline": [list(p) for p in self.timeline],
            "rare": sorted(b for b, n in self.counts.items() if n == 1),
        }
        if with_universe and self.cases:
            out.update(self._universe_block())
        return out

    def _universe_block(self) -> dict[str, Any]:
        u = self.universe()
        reached: dict[str, set[str]] = {c: set() for c in CLOSED}
        for b in self.counts:
            category, name = universe_key(b)
            if category in reached:
                reached[category].add(name)
        universe, never, excluded = {}, {}, {}
        for c in CLOSED:
            full, out = u["full"].get(c, set()), u["excluded"].get(c, {})
            reachable = full - set(out)
            universe[c] = {"size": len(full), "out_of_reach": len(out), "reachable": len(reachable),
                           "reached": len(reached[c] & reachable),
                           "reached_out_of_reach": sorted(reached[c] & set(out))}
            never[c] = sorted(reachable - reached[c])
            excluded[c] = dict(Counter(out.values()))
        reachable_total = sum(v["reachable"] for v in universe.values())
        reached_total = sum(v["reached"] for v in universe.values())
        return {"universe": universe, "universe_reachable": reachable_total, "universe_reached": reached_total,
                "universe_percent": round(100 * reached_total / reachable_total, 2) if reachable_total else None,
                "never_reached": never, "out_of_reach_reasons": excluded}


def novelty_reward(novelty: Novelty | None) -> float:
    """The guide's reward for a case (campaign/guided.py): each new behaviour counts 1, new pairs add a log share
    (a new pair is common: most cases bring some), and a case of rare behaviours earns a little even when
    nothing is new, so the fragments and edits that stay near the frontier keep credit."""
    if novelty is None:
        return 0.0
    return len(novelty.singles) + 0.25 * math.log1p(novelty.pairs) + 0.1 * novelty.rarity
