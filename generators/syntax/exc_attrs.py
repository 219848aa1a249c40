"""Exceptions seen from the handler: what a caught exception carries (a failing `assert`'s message,
implicit chaining through `__context__`, `raise ... from None`, `sys.exc_info()`), exceptions that leave a
user context manager or a generator, and `try` statements inside loops whose `continue`/`break` leave
through `finally` or whose handler continues the loop.
"""
from __future__ import annotations

from .. import ir
from ..builder import Builder
from ..choose import boolean, choose, integer
from .common import GRAPH_BREAK, code, construct, fold, operand


@construct("exception-attrs")
def exception_attrs(draw, b: Builder) -> None:
    """What a caught exception carries: a failing `assert`'s message, implicit chaining (`__context__`),
    `raise ... from None`, `sys.exc_info()`, `str`/`repr`/`type(e).__name__`, and exceptions leaving a
    user context manager, a generator, or a missing attribute."""
    var, x, bound = operand(draw, b)
    k, e = b.fresh("k"), b.fresh("err")
    kind = choose(draw, ("assert", "context", "from-none", "exc-info", "cm", "generator", "attribute", "escape"))
    if kind == "assert":
        code(b, f"""
            try:
                assert {x}.dim() == 7, 'rank'
                {k} = {x}
            except AssertionError as {e}:
                {k} = {x} + len(str({e})) + len(type({e}).__name__)
            """)
    elif kind == "context":
        code(b, f"""
            try:
                try:
                    raise KeyError('a')
                except KeyError:
                    raise ValueError('bc')
            except ValueError as {e}:
                {k} = {x} + len({e}.__context__.args) + int({e}.__cause__ is None) + len({e}.args[0])
            """)
    elif kind == "from-none":
        code(b, f"""
            try:
                try:
                    raise IndexError(1)
                except IndexError:
                    raise TypeError(2) from None
            except TypeError as {e}:
                {k} = {x} * {e}.args[0] + int({e}.__suppress_context__)
            """)
    elif kind == "escape":
        code(b, f"""
            try:
                raise ValueError(3, {x} * 2)
            except ValueError as caught:
                {e} = caught
            {GRAPH_BREAK}
            {k} = {e}.args[1] - {e}.args[0] + len(type({e}).__name__)
            """)
    elif kind == "exc-info":
        b.add_import(ir.Import("sys"))
        code(b, f"""
            try:
                raise ValueError(3)
            except ValueError:
                {e} = sys.exc_info()
            {k} = {x} + {e}[1].args[0] + int({e}[0] is ValueError)
            """)
    elif kind == "cm":
        b.add_import(ir.Import("contextlib"))
        gen = b.fresh("syn_guard")
        code(b, f"""
            @contextlib.contextmanager
            def {gen}(log):
                log.append(1)
                try:
                    yield
                finally:
                    log.append(2)
            """, module=True)
        code(b, f"""
            {e} = []
            try:
                with {gen}({e}):
                    raise KeyError(4)
            except KeyError as caught:
                {e}.append(caught.args[0])
            {k} = {x} + sum({e})
            """)
    elif kind == "generator":
        gen = b.fresh("syn_failing")
        code(b, f"""
            def {gen}(t):
                yield t
                raise ValueError(2)
            """, module=True)
        code(b, f"""
            {e} = []
            try:
                for item in {gen}({x}):
                    {e}.append(item)
            except ValueError as caught:
                {e}.append({x} * caught.args[0])
            {k} = sum({e})
            """)
    else:
        # A missing attribute of a tensor computed in the frame escapes the handler (known torch bug:
        # corpus/attribute_error_intermediate_not_caught.py): only graph inputs, or a plain object, miss here.
        is_input = x in {p.name for p in b.params}
        if not is_input:
            b.add_import(ir.Import("types"))
        missing = f"{x}.no_such_attribute" if is_input else "types.SimpleNamespace(a=1).no_such_attribute"
        code(b, f"""
            try:
                {k} = {missing}
            except AttributeError:
                {k} = {x} + int(hasattr({x}, 'shape')) + getattr({x}, 'missing', 2)
            """)
    fold(b, k, var.shape, 3 * bound + 20)


@construct("try-in-loop")
def try_in_loop(draw, b: Builder) -> None:
    """A `try` inside a loop whose `continue`/`break` leave through `finally`, or whose handler continues."""
    var, x, bound = operand(draw, b)
    acc = b.fresh("acc")
    if boolean(draw):
        code(b, f"""
            {acc} = {x}
            for i in range({integer(draw, 2, 4)}):
                try:
                    if i == {integer(draw, 0, 2)}:
                        continue
                    if i == 3:
                        break
                    {acc} = {acc} + i
                finally:
                    {acc} = {acc} * 0.5
            """)
    else:
        code(b, f"""
            {acc} = {x}
            i = 0
            while True:
                i += 1
                try:
                    if i > {integer(draw, 1, 3)}:
                        raise StopIteration(i)
                    if i % 2:
                        raise ValueError(i)
                except ValueError as err:
                    {acc} = {acc} + err.args[0]
                    continue
                except StopIteration:
                    break
                {acc} = {acc} - 1
            """)
    fold(b, acc, var.shape, bound + 8)
