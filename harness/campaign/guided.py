"""Behaviour-guided generation (`fuzz --guided`): steer drawing toward programs that make Dynamo do what no
earlier case made it do (run/behaviours.py), and toward rare combinations of what it does.

Two mechanisms, both fed by each case's `Novelty` (campaign/behaviour_log.py), scored by `novelty_reward`:

- A bandit over fragments. Each fragment's score is the reward it earned per use: a case's reward is shared
  among the fragments it drew, call-plan perturbations included.
  A fresh case picks each fragment with probability `floor * default + (1 - floor) * (default * score)
  share`: with no evidence that is the default mix, and no fragment ever drops below `floor` times its
  default share, so none starves.
- A small pool of choice sequences that reached new behaviours. A share of later cases (10-50%, following
  how much edited cases earn compared with fresh ones) is an edit of one of
  them (a point change, a truncated tail drawn afresh, a deleted or duplicated span, a splice with another
  entry), re-drawn through `hypothesis_compat.draw_from_prefix`.

Line coverage plays no part (`--coverage` measures it beside a guided run, as an instrument).

Note [Guided cases re-draw from their choices alone]
A weighted pick is recorded as the same choice the uniform draw would have made (a forced draw of the
table index, `hypothesis_compat.forced_integer`), and an edited sequence is replaced by the choices the
draw actually used. So every guided case re-draws with `generators.case.redraw(choices, families)`,
without the bandit's state: a guided campaign is reproducible per case (OUT/guided/cases.jsonl holds each
case's choices), not as a stream. Its cases carry no seed, since no seed alone draws them.
"""
from __future__ import annotations

import base64
import json
import random
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dynfuzz.campaign.behaviour_log import Novelty, novelty_reward
from dynfuzz.generators.case import Case, case_from_program
from dynfuzz.generators.choose import integer
from dynfuzz.generators.compose import programs
from dynfuzz.generators.families import load_families
from dynfuzz.generators.hypothesis_compat import data_from_seed, draw_from_prefix, forced_integer
from dynfuzz.generators.swarm import option_name
from hypothesis.database import choices_to_bytes

FLOOR = 0.3  # share of every pick that follows the default weights
POOL_SIZE = 64
MUTATE_SHARE = (0.1, 0.5)  # least and most share of cases that edit a pool entry, once the pool has entries


class Bandit:
    """Fragment scores: reward credited per use, with an average-score prior for unused fragments."""

    def __init__(self, floor: float = FLOOR) -> None:
        self.floor = floor
        self.uses: Counter[str] = Counter()
        self.reward: Counter[str] = Counter()
        self.total_uses = 0
        self.total_reward = 0.0

    def credit(self, fragments: list[str], reward: float) -> None:
        """Share a case's reward among the fragments it drew."""
        for name in fragments:
            self.uses[name] += 1
            self.reward[name] += reward / len(fragments)
        self.total_uses += len(fragments)
        self.total_reward += reward

    def score(self, name: str) -> float:
        prior = self.total_reward / self.total_uses if self.total_uses else 1.0
        return (self.reward[name] + prior) / (self.uses[name] + 1)

    def probabilities(self, names: list[str]) -> dict[str, float]:
        """Pick probability per distinct fragment of a table that repeats fragments by default weight."""
        default = Counter(names)
        weighted = {n: default[n] * self.score(n) for n in default}  # equal scores give the default weights
        total = sum(weighted.values()) or 1.0
        return {n: self.floor * default[n] / len(names) + (1 - self.floor) * weighted[n] / total for n in default}


class Picker:
    """`programs(picker=...)`: picks fragments (weighted by the bandit, or uniformly) and remembers them."""

    def __init__(self, bandit: Bandit | None, rng: random.Random) -> None:
        self.bandit, self.rng = bandit, rng
        self.used: list[str] = []

    def __call__(self, draw, options):
        options = options if isinstance(options, (list, tuple)) else list(options)
        if len(options) == 1:
            index = 0
        elif self.bandit is None:
            index = integer(draw, 0, len(options) - 1)
        else:
            names = [option_name(f) for f in options]
            probs = self.bandit.probabilities(names)
            choice = self.rng.choices(list(probs), weights=list(probs.values()))[0]
            index = forced_integer(draw, 0, len(options) - 1, names.index(choice))
        self.used.append(option_name(options[index]))
        return options[index]


@dataclass
class Entry:
    """A pool entry: a choice sequence that reached new behaviours, its reward, and how often it was edited."""

    choices: tuple
    reward: float
    index: int
    picks: int = 0

    @property
    def energy(self) -> float:
        return self.reward / (1 + self.picks)


def mutate(choices: tuple, rng: random.Random, other: tuple | None = None) -> tuple:
    """One to three edits of a choice sequence; the result may not fit the strategy any more (the re-draw
    then repairs it: misaligned choices become the simplest fitting ones, a short tail is drawn afresh)."""
    out = list(choices)
    for _ in range(rng.randint(1, 3)):
        if not out:
            break
        i = rng.randrange(len(out))
        op = rng.randrange(5 if other else 4)
        if op == 0:
            out[i] = _nudge(out[i], rng)
        elif op == 1:
            del out[rng.randint(i, len(out)):]  # keep a prefix; the rest is drawn afresh
        elif op == 2:
            del out[i:i + rng.randint(1, 4)]
        elif op == 3:
            j = min(len(out), i + rng.randint(1, 4))
            out[j:j] = out[i:j]
        else:
            cut = rng.randrange(len(other) + 1)
            out = out[:i] + list(other[cut:])
    return tuple(out)


def _nudge(value: Any, rng: random.Random) -> Any:
    if isinstance(value, bool):
        return not value
    if isinstance(value, int):
        return rng.choice([value + 1, max(value - 1, 0), 0, rng.randint(0, 2 * abs(value) + 3)])
    if isinstance(value, float):
        return rng.choice([0.0, value * 2, -value])
    return value


class Guide:
    """Draws the cases of a guided campaign and learns from each one's novelty."""

    def __init__(self, seed: int, families: tuple[str, ...], out: Path, floor: float = FLOOR,
                 pool_size: int = POOL_SIZE, mutate_share: float | tuple[float, float] = MUTATE_SHARE) -> None:
        load_families()
        self.families = families
        self.rng = random.Random(seed)
        self.bandit = Bandit(floor)
        self.pool: list[Entry] = []
        self.pool_size = pool_size
        self.share_bounds = mutate_share if isinstance(mutate_share, tuple) else (mutate_share, mutate_share)
        self.pending: dict[tuple, dict[str, Any]] = {}
        self.counts: Counter[str] = Counter()
        self.yields: Counter[str] = Counter()  # new behaviours by origin (fresh / mutant)
        self.lines: Counter[str] = Counter()  # new lines by origin, when --coverage measures them too
        self.credit: Counter[str] = Counter()  # reward by origin: what the mutate share follows
        self.log = out / "guided" / "cases.jsonl"
        self.log.parent.mkdir(parents=True, exist_ok=True)
        self.log.write_text("")

    def next_case(self, index: int) -> Case:
        """The index-th case: an edit of a pool entry (a share of the time), else a fresh weighted draw."""
        case_rng = random.Random(self.rng.getrandbits(64))
        if self.pool and case_rng.random() < self.mutate_share():
            entry = self._pick_entry(case_rng)
            other = case_rng.choice(self.pool).choices if len(self.pool) > 1 else None
            picker = Picker(None, case_rng)
            drawn = draw_from_prefix(programs(self.families, picker=picker), mutate(entry.choices, case_rng, other),
                                     case_rng.getrandbits(32))
            if drawn is not None:
                entry.picks += 1
                return self._case(drawn[0], drawn[1], index, picker, "mutant", entry.index)
        picker = Picker(self.bandit, case_rng)
        data = data_from_seed(case_rng.getrandbits(32))
        program = data.draw(programs(self.families, picker=picker))
        return self._case(program, tuple(data.choices), index, picker, "fresh", None)

    def mutate_share(self) -> float:
        """The share of cases that edit a pool entry: between the bounds, in proportion to how much an edited
        case has earned per case compared with a fresh one (edits of this grammar's choice sequences often
        reach less than fresh draws, so the share follows the evidence instead of a constant)."""
        low, high = self.share_bounds
        rate = {o: (self.credit[o] + 1.0) / (self.counts[o] + 1) for o in ("fresh", "mutant")}
        return low + (high - low) * rate["mutant"] / (rate["mutant"] + rate["fresh"])

    def _case(self, program, choices: tuple, index: int, picker: Picker, origin: str, parent: int | None) -> Case:
        case = case_from_program(program, families=self.families, choices=choices)
        self.pending[choices] = {"index": index, "origin": origin, "parent": parent, "fragments": picker.used}
        return case

    def _pick_entry(self, rng: random.Random) -> Entry:
        return rng.choices(self.pool, weights=[e.energy + 1e-3 for e in self.pool])[0]

    def observe(self, case: Case, novelty: Novelty | None, new_lines: int | None = None) -> None:
        """Credit a finished case's fragments, pool it if it reached new behaviours, log its choices.
        `novelty` is None for a case that was not judged; `new_lines` is bookkeeping only (--coverage)."""
        info = self.pending.pop(case.choices, None)
        if info is None:  # replayed from the example database: not drawn by this guide
            return
        reward = novelty_reward(novelty)
        new = list(novelty.singles) if novelty is not None else []
        self.counts[info["origin"]] += 1
        self.yields[info["origin"]] += len(new)
        self.credit[info["origin"]] += reward
        if new_lines is not None:
            self.lines[info["origin"]] += new_lines
        if info["origin"] == "fresh" and info["fragments"]:
            self.bandit.credit(info["fragments"], reward)
        if new:
            entry = Entry(case.choices, reward, info["index"])
            if len(self.pool) < self.pool_size:
                self.pool.append(entry)
            else:
                weakest = min(range(len(self.pool)), key=lambda i: self.pool[i].energy)
                if self.pool[weakest].energy < entry.energy:
                    self.pool[weakest] = entry
        record = {**info, "new_behaviours": new, "reward": round(reward, 4), "tags": sorted(case.tags),
                  "choices": base64.b64encode(choices_to_bytes(case.choices)).decode()}
        if new_lines is not None:
            record["new_lines"] = new_lines
        with self.log.open("a") as fh:
            fh.write(json.dumps(record) + "\n")

    def summary(self) -> dict[str, Any]:
        scores = {n: round(self.bandit.score(n), 3) for n in sorted(self.bandit.uses)}
        top = dict(sorted(scores.items(), key=lambda kv: -kv[1])[:10])
        lines = {"new_lines_by_origin": dict(self.lines)} if self.lines else {}
        return {"cases": dict(self.counts), "new_behaviours_by_origin": dict(self.yields),
                "reward_by_origin": {k: round(v, 3) for k, v in self.credit.items()}, **lines, "pool": len(self.pool),
                "mutate_share": round(self.mutate_share(), 3),
                "floor": self.bandit.floor, "top_fragments": top, "choices_log": str(self.log)}
