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

from .hypothesis_compat import primitive_integer

T = TypeVar("T")


@cache
def _integers(lo: int, hi: int) -> st.SearchStrategy[int]:
    return st.integers(lo, hi)


def choose(draw, options: Sequence[T]) -> T:
    """One of `options` (a non-empty sequence), shrinking toward the first."""
    options = options if isinstance(options, (list, tuple)) else list(options)
    if len(options) == 1:
        return options[0]
    return options[integer(draw, 0, len(options) - 1)]


def integer(draw, lo: int, hi: int) -> int:
    """An integer in [lo, hi], shrinking toward lo.

    Inside `programs()` the integer is drawn through Hypothesis's primitive (see hypothesis_compat), which
    records the same choice as `st.integers(lo, hi)` much faster; elsewhere the cached strategy is used.
    """
    primitive = primitive_integer(draw)
    if primitive is not None:
        return primitive(lo, hi)
    return draw(_integers(lo, hi))


def boolean(draw) -> bool:
    return integer(draw, 0, 1) == 1
