"""`Case`: one generated (or hand-written) program plus what is needed to run and re-draw it.

The source follows the dynfuzz program convention (docs/programs.md): an entry
function, `inputs(device, call=0)` returning fresh arguments, optional `CALLS`
(default 2), optional `between(call)` run before every call after the first,
optional `COMPILE_OPTIONS` (extra `torch.compile` keyword arguments), optional
`DYNAMO_CONFIG` (`torch._dynamo.config` settings patched around the compiled
calls only, never around eager).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .compose import programs
from .families import load_families
from .hypothesis_compat import data_for_choices, data_from_seed
from .render import render
from .swarm import SwarmConfig


@dataclass(frozen=True)
class Case:
    source: str
    entry: str = "f"
    tags: frozenset[str] = field(default_factory=frozenset)
    seed: int | None = None
    families: tuple[str, ...] = ()
    choices: tuple = ()
    eager_source: str | None = None  # an equivalent program eager runs instead (e.g. cond as a plain `if`)
    intended_error: str | None = None  # illegal on purpose: the exception type it is built to raise
    dynamo_config_items: tuple[tuple[str, Any], ...] = ()  # as the program's DYNAMO_CONFIG (hashable form)

    @property
    def dynamo_config(self) -> dict[str, Any]:
        """The `torch._dynamo.config` settings the compiled calls run under (the program's DYNAMO_CONFIG)."""
        return dict(self.dynamo_config_items)

    @property
    def reference_note(self) -> str:
        return "eager ran an equivalent plain-Python rendering" if self.eager_source else "eager ran the program"


def case_seed(campaign_seed: int, index: int, shard: tuple[int, int] = (1, 1)) -> int:
    """The seed of the index-th case of a campaign: stable across machines and Python versions.

    Shard `(i, n)` (`--shard i/n`) takes every n-th index of the unsharded stream, starting at i - 1, so the
    n shards of one seed never draw the same program and together draw what one unsharded run would.
    """
    i, n = shard
    return (campaign_seed * 1_000_003 + index * n + i - 1) & 0xFFFF_FFFF_FFFF


def draw_case(seed: int, families: tuple[str, ...] = (), swarm: SwarmConfig | None = None) -> Case:
    """Draw the program for `seed` deterministically (same seed, same bytes on every machine); with `swarm`, from
    the subset of the grammar its window has on (Note [Swarm windows] in swarm.py)."""
    load_families()
    data = data_from_seed(seed)
    program = data.draw(programs(families, picker=swarm.picker(seed) if swarm is not None else None))
    return case_from_program(program, seed=seed, families=families, choices=tuple(data.choices))


def redraw(choices: tuple, families: tuple[str, ...] = ()) -> Case:
    """Re-draw a case from its recorded Hypothesis choice sequence."""
    load_families()
    data = data_for_choices(choices)
    program = data.draw(programs(families))
    return case_from_program(program, families=families, choices=tuple(choices))


def case_from_program(program, *, seed: int | None = None, families: tuple[str, ...] = (),
                      choices: tuple = ()) -> Case:
    eager_source = program.eager_program
    return Case(
        source=render(program),
        entry=program.entry,
        tags=program.tags,
        seed=seed,
        families=families,
        choices=choices,
        eager_source=render(eager_source) if eager_source is not None else None,
        intended_error=program.intended_error,
        dynamo_config_items=program.dynamo_config,
    )
