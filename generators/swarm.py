"""Swarm testing (Groce et al., "Swarm Testing", ISSTA 2012): each short run of cases draws from a random subset
of the grammar instead of the full mix every time.

Note [Swarm windows]
Every choice among named options goes through the composer's picker: the featured fragment, each further
fragment, a nested block's fragments, a stdlib snippet pool, a Dynamo setting, an export mode (`Builder.pick`).
With swarm on, each option is *on* or *off* for a window of `period` consecutive case seeds (`seed // period`):
on with probability `keep`, decided by a hash of the window and the option's name (`option_name`), so the same
seed always sees the same subset, whatever ran before it. A pick is made among the options that are on, with
their usual weights times a down-weight (Note [Explained constructs are down-weighted] in campaign/swarm_weights.py);
when none is on, among all of them. A fragment that is off is never drawn in that window, so the constructs that are
on are combined more often with each other, and a fault that needs a construct the common mix drowns (or a
combination a frequent construct pre-empts) gets its turn: the point of the paper, where each feature left out
of a test configuration made some faults easier to reach.

A case's program is a pure function of its seed and the swarm settings (`SwarmConfig`: period, keep and the
down-weights its window ran with): `draw_case(seed, families, swarm)`. Each weighted pick is recorded as the
very choice the uniform draw would have made (`forced_integer`), as guided campaigns do, so the case also
re-draws from its choice sequence alone, without any swarm settings (`redraw`, the example database, the
shrinker).
"""
from __future__ import annotations

import hashlib
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .hypothesis_compat import forced_integer

PERIOD = 16  # consecutive seeds that share a subset
KEEP = 0.5  # chance an option is on in a window (the paper's choice: each feature in half the configurations)


def option_name(option: Any) -> str:
    """The name a choice among options goes by (a swarm feature, a guided bandit's arm): a fragment by family
    and name, a snippet function by module and name, a `(tag, settings)` pair by its tag."""
    if hasattr(option, "family") and hasattr(option, "name"):
        return f"{option.family}.{option.name}"
    if callable(option):
        return f"{option.__module__.rsplit('.', 1)[-1]}.{option.__name__}"
    if isinstance(option, tuple) and option and isinstance(option[0], str):
        return option[0]
    return repr(option)[:60]


@dataclass(frozen=True)
class SwarmConfig:
    """What a swarm case is drawn under, besides its seed: the window length, the chance an option is on, and
    `down`, option name -> a factor below 1 for options whose constructs a campaign has explained already."""

    period: int = PERIOD
    keep: float = KEEP
    down: Mapping[str, float] = field(default_factory=dict)

    def window(self, seed: int) -> int:
        return seed // self.period

    def enabled(self, window: int, name: str) -> bool:
        """Whether option `name` is on in `window` (a pure function of both)."""
        digest = hashlib.sha256(f"{window}\0{name}".encode()).digest()
        return int.from_bytes(digest[:8], "big") < self.keep * 2 ** 64

    def picker(self, seed: int) -> SwarmPicker:
        return SwarmPicker(self, self.window(seed), random.Random(f"swarm {seed}"))

    def as_dict(self) -> dict[str, Any]:
        return {"period": self.period, "keep": self.keep, "down": dict(sorted(self.down.items()))}


class SwarmPicker:
    """`programs(picker=...)` for one swarm case: picks among the options on in its window, by weight times
    down-weight, and records each pick as the uniform draw's choice. `used` lists the names it picked."""

    def __init__(self, config: SwarmConfig, window: int, rng: random.Random) -> None:
        self.config, self.window, self.rng = config, window, rng
        self.used: list[str] = []
        self._on: dict[str, bool] = {}

    def _enabled(self, name: str) -> bool:
        on = self._on.get(name)
        if on is None:
            on = self._on[name] = self.config.enabled(self.window, name)
        return on

    def __call__(self, draw, options: Sequence[Any]) -> Any:
        options = options if isinstance(options, (list, tuple)) else list(options)
        if len(options) == 1:
            return options[0]
        names = [option_name(o) for o in options]
        down = [self.config.down.get(n, 1.0) for n in names]
        weights = [d if self._enabled(n) else 0.0 for n, d in zip(names, down)]
        if not any(weights):
            weights = down
        index = self.rng.choices(range(len(options)), weights=weights)[0]
        forced_integer(draw, 0, len(options) - 1, index)
        self.used.append(names[index])
        return options[index]
