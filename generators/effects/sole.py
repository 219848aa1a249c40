"""A container mutation that is the only one: one subscript write, slice assignment, `del c[i]`,
`c[i] += v` or `d[k] = v` on an existing key, applied to a pre-existing list or dict that nothing
else in the program mutates.

Elsewhere a subscript write usually comes with an append or similar, and that other mutation makes
Dynamo replay the whole container, hiding a lost write (issue 14, construct 3). Every write here is
valid whatever the container went through on earlier calls: indices stay within the length the
program keeps, deletions are guarded by a length or membership test.
"""
from __future__ import annotations

from .. import ir
from ..builder import Builder
from ..choose import boolean, choose, integer
from ..fragments import fragment
from .common import FAMILY, guarded, holder_class, lit, read_into_output, small_int
from .containers import read_scalar

SOLE = "sole-mutation"
LISTS = ([1, 2, 3], [4, 0, 2, 5], [3, 1, 2])
DICTS = ({"a": 1, "b": 2, "c": 3}, {"b": 4, "a": 0}, {"c": 2, "a": 5, "b": 1})


def _list_write(draw, c: ir.Expr, v: ir.Expr) -> tuple[list[ir.Stmt], str]:
    """One write to a list that always has at least 3 elements before it (deletions are guarded)."""
    i = ir.Const(choose(draw, (0, -1, 1)))
    op = choose(draw, ("setitem", "augassign", "slice", "slice-grow", "del", "del-slice"))
    if op == "setitem":
        return [ir.Assign(ir.Sub(c, i), v)], "via-subscript"
    if op == "augassign":
        return [ir.AugAssign(ir.Sub(c, i), "+", v)], "via-augassign"
    if op == "slice":
        return [ir.Assign(ir.Sub(c, ir.Slice(ir.Const(0), ir.Const(2))), ir.ListExpr((v, v)))], "via-slice"
    if op == "slice-grow":
        return [ir.Assign(ir.Sub(c, ir.Slice(ir.Const(1), ir.Const(2))), ir.ListExpr((v, v, v)))], "via-slice"
    long_enough = ir.BinOp(ir.call("len", c), ">", ir.Const(1))
    if op == "del":
        return [guarded(long_enough, ir.Del((ir.Sub(c, i),)))], "via-del"
    return [guarded(long_enough, ir.Del((ir.Sub(c, ir.Slice(ir.Const(1), ir.Const(2))),)))], "via-del"


def _dict_write(draw, c: ir.Expr, v: ir.Expr, keys: list[str]) -> tuple[list[ir.Stmt], str]:
    """One write to an existing key of a dict (a deletion, the one write that can make a key missing on
    a later call, is guarded by membership)."""
    k = ir.Const(choose(draw, keys))
    op = choose(draw, ("setitem", "augassign", "del"))
    if op == "setitem":
        return [ir.Assign(ir.Sub(c, k), v)], "via-subscript"
    if op == "augassign":
        return [ir.AugAssign(ir.Sub(c, k), "+", v)], "via-augassign"
    return [guarded(ir.BinOp(k, "in", c), ir.Del((ir.Sub(c, k),)))], "via-del"


def place_existing(draw, b: Builder, init: ir.Expr) -> tuple[ir.Expr, str]:
    """The container made before the compiled call: an argument, a global, or a pre-existing object's
    attribute. Returns how the region reaches it and where it lives."""
    where = choose(draw, ("arg", "global", "object"))
    if where == "arg":
        name = b.fresh("c")
        b.add_value_input(name, init)
        return ir.Name(name), where
    if where == "global":
        name = b.fresh("C_").upper()
        b.add_global(name, init)
        return ir.Name(name), where
    name = b.fresh("OBJ_").upper()
    b.add_global(name, holder_class(draw, b)(init))
    return ir.Attr(ir.Name(name), "items"), where


@fragment(FAMILY, SOLE, weight=3, nestable=False)
def sole_mutation(draw, b: Builder) -> None:
    """Exactly one write to a pre-existing list or dict, maybe read before and after."""
    kind = choose(draw, ("list", "dict"))
    value = choose(draw, LISTS) if kind == "list" else choose(draw, DICTS)
    c, where = place_existing(draw, b, lit(value))
    variant = "list" if kind == "list" else "dict"
    if boolean(draw):
        read_into_output(draw, b, read_scalar(c, variant))
    v = ir.Const(small_int(draw) + 10)
    stmts, tag = _list_write(draw, c, v) if kind == "list" else _dict_write(draw, c, v, list(value))
    b.emit(*stmts)
    if integer(draw, 0, 3) > 0:
        read_into_output(draw, b, read_scalar(c, variant))
    b.tag(f"sole-{kind}", f"where-{where}", tag)
