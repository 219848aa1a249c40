"""Doubles for the guard oracle: a compiler that ignores value guards, and one that recompiles every call."""
from __future__ import annotations

import functools
import types

from .base import EMPTY, DoubleCompiler, cell_value, double

_SCALARS = (bool, int, float, str)


def _names(code: types.CodeType) -> set[str]:
    out = set(code.co_names)
    for c in code.co_consts:
        if isinstance(c, types.CodeType):
            out |= _names(c)
    return out


@double("stale-constants")
class StaleConstants(DoubleCompiler):
    """Bakes in the scalar globals and closure-cell contents seen at the first call, and keeps using
    them: the compiler that caches per function and never re-checks a global's or a cell's value."""

    def wrap(self, fn):
        baked: dict = {}

        @functools.wraps(fn)
        def run(*args, **kwargs):
            g, cells = fn.__globals__, fn.__closure__ or ()
            names = [n for n in _names(fn.__code__) if isinstance(g.get(n), _SCALARS)]
            if not baked:
                baked["globals"] = {n: g[n] for n in names}
                baked["cells"] = [cell_value(c) for c in cells]
            live_g = {n: g[n] for n in baked["globals"] if n in g}
            live_c = [cell_value(c) for c in cells]
            g.update(baked["globals"])
            for c, v in zip(cells, baked["cells"]):
                if v is not EMPTY and isinstance(v, _SCALARS):
                    c.cell_contents = v
            try:
                return fn(*args, **kwargs)
            finally:
                for n, v in live_g.items():
                    if g.get(n) == baked["globals"][n]:
                        g[n] = v
                for c, old, live in zip(cells, baked["cells"], live_c):
                    if live is not EMPTY and cell_value(c) is old:
                        c.cell_contents = live

        return run
