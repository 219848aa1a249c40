"""The grammar as data: every construct a family can emit is one `Fragment` entry.

A fragment names its family, the feature tags it exercises, a weight, and a
function `draw(draw, builder)` that appends statements to the current scope.
The composer (`compose.py`) draws fragments from the table; adding a construct
is adding an entry here or in a family module, never a new path through the
composer.
"""
from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass

from .builder import Builder

DrawFn = Callable[[Callable, Builder], None]


@dataclass(frozen=True)
class Fragment:
    name: str
    family: str
    tags: tuple[str, ...]
    draw: DrawFn
    weight: int = 1
    nestable: bool = True  # may be drawn inside a nested function body, not only at the entry's top level


REGISTRY: dict[str, list[Fragment]] = {}

# A construct's off switch: fragments carrying any tag named here are never drawn (in every spawned worker
# too, hence the environment). Used to show that a construct, not its neighbours, is what finds a bug.
DISABLE_ENV = "DYNFUZZ_DISABLE_CONSTRUCTS"


def disabled_constructs() -> frozenset[str]:
    """Construct tags switched off through `DYNFUZZ_DISABLE_CONSTRUCTS=tag,tag`."""
    return frozenset(t for t in os.environ.get(DISABLE_ENV, "").split(",") if t)


def register(*fragments: Fragment) -> None:
    for frag in fragments:
        REGISTRY.setdefault(frag.family, []).append(frag)


def fragment(family: str, *tags: str, weight: int = 1, nestable: bool = True):
    """Decorator form: `@fragment("basic", "pointwise")` registers the function as a fragment."""

    def deco(fn: DrawFn) -> DrawFn:
        register(Fragment(fn.__name__, family, tags or (fn.__name__,), fn, weight, nestable))
        return fn

    return deco
