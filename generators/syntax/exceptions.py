"""Exceptions Dynamo must model rather than run: raising builtin and user-defined exceptions on purpose,
catching them (by type, by a tuple of types, by a base class), reading `e.args` (tensors among them),
re-raising, chaining with `raise X from Y`, `else` and `finally` clauses, nested handlers, exceptions
raised in an inlined helper and caught in the entry, `next(it, default)`, `StopIteration` and `assert`.

Every handler computes a value that flows into a returned tensor, so running the wrong handler (or no
handler) changes the outputs.
"""
from __future__ import annotations

from ..builder import Builder
from ..choose import boolean, choose, integer
from .common import code, construct, fold, operand


def _custom_exception(draw, b: Builder) -> tuple[str, str]:
    """A module-level `Exception` subclass, plain (raised with two arguments) or with an `__init__` that keeps
    an extra attribute; returns its name and how to raise it (a format string taking the value)."""
    cls = b.fresh("SynError")
    if boolean(draw):
        code(b, f"class {cls}(Exception):\n    pass", module=True)
        return cls, f"{cls}({{}}, 1)"
    else:
        code(b, f"""
            class {cls}(Exception):
                def __init__(self, value, scale=2):
                    super().__init__(value)
                    self.scale = scale
            """, module=True)
    return cls, f"{cls}({{}})"


@construct("try-except")
def try_except(draw, b: Builder) -> None:
    """A builtin or user-defined exception raised on purpose (or not, on the branch taken) and caught."""
    var, x, bound = operand(draw, b)
    k, t, e = b.fresh("k"), b.fresh("t"), b.fresh("err")
    kind = choose(draw, ("value", "key", "index", "zerodiv", "custom", "tuple", "base"))
    if kind == "value":
        limit = choose(draw, (0, var.numel - 1, 5))
        code(b, f"""
            try:
                {t} = {x} * 2
                if {t}.numel() > {limit}:
                    raise ValueError(3, {t})
                {k} = {t} + 1
            except ValueError as {e}:
                {k} = {e}.args[1] - {e}.args[0]
            """)
        fold(b, k, var.shape, 2 * bound + 3)
    elif kind == "key":
        key = choose(draw, ("zz", "b", "q"))
        d = b.fresh("d")
        code(b, f"""
            {d} = {{'a': {x}, 'b': 2.0}}
            try:
                {k} = {x} + {d}['{key}']
            except KeyError as {e}:
                {k} = {d}['a'] * len({e}.args[0])
            """)
        fold(b, k, var.shape, 2 * bound + 2)
    elif kind == "index":
        idx = choose(draw, (5, 1, -3, 2))
        lst = b.fresh("lst")
        code(b, f"""
            {lst} = [{x}, {x} * 0.5]
            try:
                {k} = {lst}[{idx}]
            except IndexError:
                {k} = {x} - 1
            """)
        fold(b, k, var.shape, bound + 1)
    elif kind == "zerodiv":
        off = choose(draw, (0, 1, 2))
        op = choose(draw, ("//", "%", "/"))
        n = b.fresh("n")
        code(b, f"""
            {n} = {x}.numel() - {var.numel - off}
            try:
                {k} = {x} * (6 {op} {n})
            except ZeroDivisionError as {e}:
                {k} = {x} + len({e}.args)
            """)
        fold(b, k, var.shape, 6 * bound + 1)
    elif kind == "custom":
        cls, make = _custom_exception(draw, b)
        caught = choose(draw, (cls, "Exception", f"({cls}, KeyError)"))
        code(b, f"""
            try:
                raise {make.format(f"{x} * 3")}
            except {caught} as {e}:
                {k} = {e}.args[0] + len({e}.args) + {e}.args[-1]
            """)
        fold(b, k, var.shape, 6 * bound + 3)
    elif kind == "tuple":
        idx = choose(draw, (3, 0))
        key = choose(draw, ("a", "m"))
        code(b, f"""
            try:
                {k} = {x} * [1, 2][{idx}] + {{'a': 1}}['{key}']
            except (KeyError, IndexError) as {e}:
                {k} = {x} - len({e}.args) - int(isinstance({e}, KeyError))
            """)
        fold(b, k, var.shape, 2 * bound + 2)
    else:
        code(b, f"""
            try:
                {k} = {x} + int('{choose(draw, ('x1', '7'))}')
            except Exception as {e}:
                {k} = {x} * 2 if isinstance({e}, ValueError) else {x}
            """)
        fold(b, k, var.shape, 2 * bound + 7)


@construct("raise-flow")
def raise_flow(draw, b: Builder) -> None:
    """Exceptions that travel: a bare `raise` caught by an outer try, `raise X from Y`, a `finally` run on
    the way out of a nested try, and an exception raised in a (module-level, inlined) helper."""
    var, x, bound = operand(draw, b)
    k, e, log = b.fresh("k"), b.fresh("err"), b.fresh("log")
    kind = choose(draw, ("reraise", "from", "nested-finally", "helper", "helper-deep"))
    if kind == "reraise":
        code(b, f"""
            {log} = []
            try:
                try:
                    raise KeyError({integer(draw, 1, 4)}, 5)
                except KeyError:
                    {log}.append(1)
                    raise
            except KeyError as {e}:
                {log}.append({e}.args[0] - {e}.args[1])
            {k} = {x} + sum({log})
            """)
        fold(b, k, var.shape, bound + 5)
    elif kind == "from":
        code(b, f"""
            try:
                try:
                    {k} = {{}}[{integer(draw, 1, 3)}]
                except KeyError as inner:
                    raise ValueError({x} * 2, 0.5) from inner
            except ValueError as {e}:
                {k} = {e}.args[0] * {e}.args[1] + {e}.__cause__.args[0]
            """)
        fold(b, k, var.shape, bound + 3)
    elif kind == "nested-finally":
        b.tag("try-finally")
        raised = boolean(draw)
        code(b, f"""
            {log} = 0
            try:
                try:
                    {log} += 1
                    {"raise IndexError(2)" if raised else "pass"}
                finally:
                    {log} += 10
            except IndexError as {e}:
                {log} += {e}.args[0]
            {k} = {x} * {log}
            """)
        fold(b, k, var.shape, 13 * bound)
    else:
        check = b.fresh("syn_check")
        limit = choose(draw, (var.numel - 1, var.numel, 0))
        # A tensor made in the inlined helper travelling in the exception makes Dynamo give up on the frame.
        second = choose(draw, ("0.5", "-2.0", "t.sum()"))
        code(b, f"""
            def {check}(t, limit):
                if t.numel() > limit:
                    raise ValueError(t.numel(), {second})
                return t * 2
            """, module=True)
        call = f"{check}({x}, {limit})"
        if kind == "helper-deep":
            outer = b.fresh("syn_wrap")
            code(b, f"""
                def {outer}(t, limit):
                    try:
                        return {check}(t, limit)
                    except TypeError:
                        return t
                """, module=True)
            call = f"{outer}({x}, {limit})"
        code(b, f"""
            try:
                {k} = {call}
            except ValueError as {e}:
                {k} = {x} - {e}.args[0] + {e}.args[1] / 4
            """)
        fold(b, k, var.shape, bound + var.numel * (1 + bound))


@construct("try-finally")
def try_else_finally(draw, b: Builder) -> None:
    """`try/except/else` and `try/finally`, in the entry and in a helper that returns from its `try`."""
    var, x, bound = operand(draw, b)
    k, log = b.fresh("k"), b.fresh("log")
    kind = choose(draw, ("else", "finally", "helper-return"))
    if kind == "else":
        raise_it = boolean(draw)
        code(b, f"""
            try:
                {k} = {x} * 2
                {"raise ValueError(1)" if raise_it else "pass"}
            except ValueError:
                {k} = {x}
            else:
                {k} = {k} + 1
            finally:
                {k} = {k} - 0.5
            """)
        fold(b, k, var.shape, 2 * bound + 2)
    elif kind == "finally":
        code(b, f"""
            {log} = []
            try:
                {k} = {x} + 1
            finally:
                {log}.append(2)
            """)
        fold(b, f"{k} * len({log})", var.shape, bound + 1)
    else:
        fin = b.fresh("syn_fin")
        code(b, f"""
            def {fin}(t, log):
                try:
                    return t * 2
                finally:
                    log.append(3)
            """, module=True)
        code(b, f"""
            {log} = [1]
            {k} = {fin}({x}, {log})
            """)
        fold(b, f"{k} + sum({log})", var.shape, 2 * bound + 4)


@construct("next-default", "assert")
def iteration_end(draw, b: Builder) -> None:
    """`next(it, default)` past the end, a `StopIteration` caught around a `while True`, and an `assert`
    that holds."""
    var, x, bound = operand(draw, b)
    k, it, tot = b.fresh("k"), b.fresh("it"), b.fresh("total")
    assertion = choose(draw, (f"{x}.shape == {tuple(var.shape)!r}", f"{x}.dim() == {len(var.shape)}",
                              f"len({it}) >= 0 if False else True"))
    if boolean(draw):
        code(b, f"""
            {it} = iter([{x}, {x} * 2])
            {k} = next({it})
            {k} = {k} + next({it}, 1.0)
            {tot} = next({it}, None)
            assert {assertion}, 'shape'
            {k} = {k} + ({x} if {tot} is None else {tot})
            """)
        fold(b, k, var.shape, 4 * bound + 1)
    else:
        code(b, f"""
            {it} = iter(({integer(draw, 1, 3)}, 2, 3))
            {tot} = 0
            try:
                while True:
                    {tot} += next({it})
            except StopIteration:
                {tot} += 10
            assert {assertion}
            {k} = {x} + {tot}
            """)
        fold(b, k, var.shape, bound + 20)

