"""Order is state: programs whose final state differs from eager only in the order of keys, attributes
or list elements (issue 14, construct 4).

A pre-existing dict or OrderedDict has existing keys overwritten, deleted and re-added, moved, and new
keys added out of alphabetical order; a pre-existing object gets several new attributes in one call,
an existing attribute overwritten or deleted and re-added; a pre-existing list gets elements inserted
through every path. The effects oracle compares key order, `vars(obj)` order and list order, and the
entry folds the order into an output too.
"""
from __future__ import annotations

from .. import ir
from ..builder import Builder
from ..choose import boolean, choose, integer
from ..fragments import fragment
from .common import FAMILY, guarded, lit, read_into_output, small_int, stmt, use_collections
from .objects import object_class
from .probes import fold_keys
from .sole import place_existing

ORDER = "order-state"
NEW_KEYS = ("z", "y", "x")  # added in this order: never the sorted one


def _dict_op(draw, d: ir.Expr, v: ir.Expr) -> tuple[list[ir.Stmt], str]:
    k = ir.Const(choose(draw, ("a", "b")))
    op = choose(draw, ("overwrite", "del-readd", "pop-readd", "new-keys", "update-new"))
    if op == "overwrite":
        return [ir.Assign(ir.Sub(d, k), v)], "order-overwrite"
    if op == "del-readd":
        return [guarded(ir.BinOp(k, "in", d), ir.Del((ir.Sub(d, k),))), ir.Assign(ir.Sub(d, k), v)], "order-readd"
    if op == "pop-readd":
        return [stmt(ir.method(d, "pop", k, ir.Const(None))), ir.Assign(ir.Sub(d, k), v)], "order-readd"
    if op == "new-keys":
        return [ir.Assign(ir.Sub(d, ir.Const(n)), v) for n in NEW_KEYS[: integer(draw, 2, 3)]], "order-new"
    return [stmt(ir.method(d, "update", ir.DictExpr(tuple((ir.Const(n), v) for n in NEW_KEYS[:2]))))], "order-new"


@fragment(FAMILY, ORDER, "order-dict", nestable=False)
def dict_order(draw, b: Builder) -> None:
    """Two or three order-changing writes to a pre-existing dict or OrderedDict; the entry folds the
    resulting key order into an output."""
    odict = boolean(draw)
    items = [("a", 1), ("b", 2), ("c", 3)][: integer(draw, 2, 3)]
    if odict:
        use_collections(b)
    init = ir.call("collections.OrderedDict", lit(items)) if odict else lit(dict(items))
    d, where = place_existing(draw, b, init)
    tags = {f"where-{where}"} | ({"order-odict"} if odict else set())
    for _ in range(integer(draw, 2, 3)):
        stmts, tag = _dict_op(draw, d, ir.Const(small_int(draw)))
        b.emit(*stmts)
        tags.add(tag)
    read_into_output(draw, b, fold_keys(b, d))
    b.tag(*tags)


def _attr_op(draw, o: ir.Expr, v: ir.Expr) -> tuple[list[ir.Stmt], str]:
    op = choose(draw, ("new-attrs", "setattr", "overwrite"))
    if op == "new-attrs":
        return [ir.Assign(ir.Attr(o, n), v) for n in NEW_KEYS[: integer(draw, 2, 3)]], "order-new"
    if op == "setattr":
        return [stmt(ir.call("setattr", o, ir.Const(n), v)) for n in ("w", "u")], "order-new"
    return [ir.Assign(ir.Attr(o, "a"), ir.BinOp(ir.Attr(o, "a"), "+", v))], "order-overwrite"


@fragment(FAMILY, ORDER, "order-attr", nestable=False)
def attr_order(draw, b: Builder) -> None:
    """Several attribute writes to one pre-existing object (attributes `a`, `b`) in one call: new
    attributes out of alphabetical order, through `setattr`, or `a` overwritten."""
    o, tags = _object(draw, b)
    for _ in range(integer(draw, 2, 3)):
        stmts, tag = _attr_op(draw, o, ir.Const(small_int(draw)))
        b.emit(*stmts)
        tags.add(tag)
    read_into_output(draw, b, ir.BinOp(ir.BinOp(ir.Attr(o, "a"), "*", ir.Const(2)), "+", ir.Attr(o, "b")))
    b.tag(*tags)


def _object(draw, b: Builder, plain: bool | None = None) -> tuple[ir.Name, set[str]]:
    """A pre-existing object with attributes `a` then `b`: an instance of a module-level class, or (unless
    `plain`) a `types.SimpleNamespace`; an argument or a global."""
    first = ir.Const(small_int(draw))
    if plain or boolean(draw):
        init = ir.call(object_class(b, prop=False), first)
    else:
        b.add_import(ir.Import("types"))
        init = ir.call("types.SimpleNamespace", a=first, b=ir.Const(1))
    where = choose(draw, ("arg", "global"))
    name = b.fresh("ob") if where == "arg" else b.fresh("OB_").upper()
    if where == "arg":
        b.add_value_input(name, init)
    else:
        b.add_global(name, init)
    return ir.Name(name), {f"where-{where}"}


@fragment(FAMILY, ORDER, "order-reinsert", nestable=False)
def reinsert(draw, b: Builder) -> None:
    """An entry moved within a pre-existing container: `OrderedDict.move_to_end` (to either end), or an
    attribute of a class instance deleted and added again (it moves to the end of `vars(obj)`).

    Kept apart from the other order fragments because torch 2.13 loses both reorderings (corpus/
    odict_move_to_end_arg_lost.py, corpus/attr_del_readd_order_lost.py): a campaign that must tell a
    mutant from these known bugs switches this fragment off."""
    k = choose(draw, ("a", "b"))
    if boolean(draw):
        use_collections(b)
        d, where = place_existing(draw, b, ir.call("collections.OrderedDict", lit([("a", 1), ("b", 2), ("c", 3)])))
        last = ir.Const(False) if boolean(draw) else None
        move = ir.method(d, "move_to_end", ir.Const(k)) if last is None else \
            ir.method(d, "move_to_end", ir.Const(k), last=last)
        b.emit(stmt(move))
        read_into_output(draw, b, fold_keys(b, d))
        b.tag(f"where-{where}", "order-odict")
        return
    o, tags = _object(draw, b, plain=True)
    b.emit(ir.Del((ir.Attr(o, k),)), ir.Assign(ir.Attr(o, k), ir.Const(small_int(draw))))
    read_into_output(draw, b, ir.BinOp(ir.BinOp(ir.Attr(o, "a"), "*", ir.Const(2)), "+", ir.Attr(o, "b")))
    b.tag(*tags)


def _list_insert(draw, c: ir.Expr, v: ir.Expr, rebind_ok: bool) -> ir.Stmt:
    op = choose(draw, ("append", "insert", "insert-end", "slice-insert", "slice-front", "iadd", "extend"))
    if op == "iadd" and not rebind_ok:  # `G += [v]` on a global would need a `global` declaration
        op = "extend"
    if op == "append":
        return stmt(ir.method(c, "append", v))
    if op == "insert":
        return stmt(ir.method(c, "insert", ir.Const(choose(draw, (1, -1, 0))), v))
    if op == "insert-end":
        return stmt(ir.method(c, "insert", ir.call("len", c), v))
    if op == "slice-insert":
        return ir.Assign(ir.Sub(c, ir.Slice(ir.Const(1), ir.Const(1))), ir.ListExpr((v,)))
    if op == "slice-front":
        return ir.Assign(ir.Sub(c, ir.Slice(None, ir.Const(0))), ir.ListExpr((v, ir.Const(7))))
    if op == "iadd":
        return ir.AugAssign(c, "+", ir.ListExpr((v,)))
    return stmt(ir.method(c, "extend", ir.ListExpr((v, ir.Const(8)))))


@fragment(FAMILY, ORDER, "order-list", nestable=False)
def list_order(draw, b: Builder) -> None:
    """Elements inserted into a pre-existing list through two or three different paths; the entry reads
    the first and last element, so the insertion order reaches the outputs."""
    c, where = place_existing(draw, b, lit([1, 2, 3]))
    for _ in range(integer(draw, 2, 3)):
        b.emit(_list_insert(draw, c, ir.Const(small_int(draw) + 10), where != "global"))
    first_last = ir.BinOp(ir.BinOp(ir.Sub(c, ir.Const(0)), "*", ir.Const(3)), "+", ir.Sub(c, ir.Const(-1)))
    read_into_output(draw, b, ir.BinOp(first_last, "%", ir.Const(97)))
    b.tag(f"where-{where}")
