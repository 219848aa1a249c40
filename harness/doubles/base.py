"""The base of every double: runs the function eagerly, counting calls as 'frames'."""
from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from dynfuzz.run.compiler_base import Compiler

DOUBLES: dict[str, type[Compiler]] = {}


def double(name: str):
    def deco(cls):
        cls.name = name
        DOUBLES[name] = cls
        return cls

    return deco


class DoubleCompiler(Compiler):
    """Compiles nothing: `wrap(fn)` decides what a call does. One 'frame' is counted at the first call."""

    def reset(self) -> None:
        """Per case: programs may still run Dynamo under a double (eager-mode `torch.cond` compiles its
        branches), so its caches are cleared as for real compiles, keeping cases independent."""
        import torch._dynamo

        torch._dynamo.reset()
        self._frames = 0

    def compile(self, fn: Callable, options: dict[str, Any]) -> Callable:
        self._frames = 0
        inner = self.wrap(fn)

        @functools.wraps(fn)
        def compiled(*args, **kwargs):
            if self._frames == 0:
                self._frames = 1
            return inner(*args, **kwargs)

        return compiled

    def wrap(self, fn: Callable) -> Callable:
        return fn

    def frames(self) -> int:
        return getattr(self, "_frames", 0)


EMPTY = object()


def cell_value(cell):
    """A closure cell's contents, or `EMPTY` for a cell not yet bound."""
    try:
        return cell.cell_contents
    except ValueError:
        return EMPTY


def map_first(value, accept, fn):
    """Apply `fn` to the first tensor in a (possibly nested tuple/list) output that `accept`s; the rest as is."""
    done = [False]

    def go(v):
        if done[0]:
            return v
        if accept(v):
            done[0] = True
            return fn(v)
        if isinstance(v, (tuple, list)):
            return type(v)(go(x) for x in v)
        return v

    return go(value)
