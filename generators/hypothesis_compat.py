"""The one place dynfuzz reaches into Hypothesis's private API (`hypothesis.internal`).

Campaigns draw programs outside a `@given` test, from their own seeds and recorded choice sequences,
and minimization shrinks a choice sequence toward "same failure": Hypothesis has no public API for
either. Everything private goes through the few functions here, each written to work on the oldest and
the newest release that pyproject.toml allows (tox envs `hypothesis-oldest` / `hypothesis-newest`).
Renames seen so far: 6.170 `ConjectureRunner.interesting_examples` -> `interesting_test_cases`,
`shrink_interesting_examples()` -> `shrink_interesting_test_cases()`.
"""
from __future__ import annotations

from collections.abc import Callable
from random import Random
from typing import Any

from hypothesis import HealthCheck, settings
from hypothesis.errors import StopTest
from hypothesis.internal.conjecture.data import ConjectureData
from hypothesis.internal.conjecture.engine import ConjectureRunner
from hypothesis.internal.conjecture.providers import Constants, HypothesisProvider

__all__ = ["ConjectureData", "data_for_choices", "data_from_seed", "draw_from_prefix", "forced_integer",
           "primitive_integer", "shrink_choices"]


class SeedOnlyProvider(HypothesisProvider):
    """Hypothesis's provider without "local constants".

    Hypothesis draws about 5% of values from literals found in the non-library modules loaded in the process
    (`providers._get_local_constants`, which scans `sys.modules`). So the same seed drew other programs under
    pytest (whose test modules add literals) than from the CLI, and would differ again between an editable
    install and a wheel: the gate's "same seed, same programs" broke. Without them a draw depends on the seed
    and the Hypothesis release only."""

    _local_constants = Constants()


def data_from_seed(seed: int) -> ConjectureData:
    """A fresh ConjectureData drawing at random from `seed` (same seed, same choices on every machine)."""
    return ConjectureData(random=Random(seed), provider=SeedOnlyProvider)


def data_for_choices(choices: tuple | list) -> ConjectureData:
    """A ConjectureData that replays a recorded choice sequence (StopTest, a BaseException, when it runs out)."""
    return ConjectureData.for_choices(tuple(choices))


def draw_from_prefix(strategy: Any, prefix: tuple | list, seed: int) -> tuple[Any, tuple] | None:
    """Draw `strategy` replaying `prefix` (a choice sequence, typically an edited one), then at random from
    `seed` once it runs out. A prefix choice that no longer fits (another type, out of range) is replaced by
    the simplest fitting one, as Hypothesis does for misaligned sequences. Returns the value and the full
    choice sequence actually used (which re-draws it alone), or None when the draw was rejected or overran.
    """
    data = ConjectureData(random=Random(seed), prefix=tuple(prefix), provider=SeedOnlyProvider)
    try:
        value = data.draw(strategy)
    except StopTest:
        return None
    return value, tuple(data.choices)


def forced_integer(draw: Callable[..., Any], lo: int, hi: int, value: int) -> int:
    """Record `value` as the choice an integer draw in [lo, hi] made (the same record `primitive_integer`
    leaves), so a program built from a weighted pick re-draws from its choices without the weights."""
    data = getattr(draw, "__self__", None)
    if not isinstance(data, ConjectureData):
        raise TypeError("forced_integer needs a ConjectureData's draw")
    return data.draw_integer(lo, hi, forced=value)


def primitive_integer(draw: Callable[..., Any]) -> Callable[[int, int], int] | None:
    """`ConjectureData.draw_integer` behind a bound `data.draw`, or None (outside a ConjectureData, or on a
    release without it). It records the same choice as `st.integers(lo, hi)` without the per-draw strategy
    machinery, which dominated generation time."""
    data = getattr(draw, "__self__", None)
    if not isinstance(data, ConjectureData):
        return None
    return getattr(data, "draw_integer", None)


def _interesting(runner: ConjectureRunner) -> dict[Any, Any]:
    found = getattr(runner, "interesting_test_cases", None)
    return found if found is not None else runner.interesting_examples


def _shrink(runner: ConjectureRunner) -> None:
    shrink = getattr(runner, "shrink_interesting_test_cases", None) or runner.shrink_interesting_examples
    shrink()


def shrink_choices(choices: tuple, test_fn: Callable[[ConjectureData], None], max_examples: int = 300,
                   seed: int = 0) -> tuple | None:
    """Shrink `choices` with Hypothesis's shrinker; `test_fn(data)` calls `data.mark_interesting(key)` when
    the drawn value still fails. Returns the smallest interesting choice sequence, or None when the
    original sequence is not interesting."""
    runner = ConjectureRunner(test_fn, settings=settings(database=None, max_examples=max_examples, deadline=None,
                                                         suppress_health_check=list(HealthCheck)),
                              random=Random(seed))
    runner.cached_test_function(tuple(choices))
    if not _interesting(runner):
        return None
    _shrink(runner)
    best = min(_interesting(runner).values(), key=lambda r: (len(r.choices), r.choices))
    return tuple(best.choices)
