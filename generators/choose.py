"""Cached draws: picking from a sequence without building a new strategy object on every draw.

Hypothesis validates each new strategy object the first time it is drawn from,
which dominated generation time; these helpers reuse one cached strategy per
size or range. They shrink like `sampled_from` and `integers`: toward the first
option and the lower bound.
"""
from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from typing import TypeVar

from hypothesis import strategies as st

T = TypeVar("T")


@cache
def _integers(lo: int, hi: int) -> st.SearchStrategy[int]:
    return st.integers(lo, hi)


_BOOLEANS = st.booleans()


def choose(draw, options: Sequence[T]) -> T:
    """One of `options` (a non-empty sequence), shrinking toward the first."""
    options = options if isinstance(options, (list, tuple)) else list(options)
    if len(options) == 1:
        return options[0]
    return options[draw(_integers(0, len(options) - 1))]


def integer(draw, lo: int, hi: int) -> int:
    return draw(_integers(lo, hi))


def boolean(draw) -> bool:
    return draw(_BOOLEANS)
