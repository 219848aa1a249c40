"""Closures fragments where two cells agree: the same object in two cells, the same name in a
pre-existing function and in the compiled frame, an equal value under one name.

Shadowing elsewhere in the family always pairs different objects, so a compiler that resolves a
cell by its name, or by the identity of what it holds, instead of by the cell itself, still gets
the right value. Here the two cells start out agreeing and only one of them is later rebound, so
the wrong resolution shows on the read that follows (issue 14, constructs 1 and 2).
"""
from __future__ import annotations

from .. import ir
from ..builder import Builder
from ..choose import boolean, choose, integer
from ..fragments import fragment
from .cells import FAMILY, MUTABLE, Cell, init, mean_of, new_cell, operand, read, tanh, total, with_nonlocal, write
from .preexisting import module_factory

AGREE = "cells-agree"
PREEXISTING = "preexisting-cells"
GRAPH_BREAK = ir.ExprStmt(ir.call("torch._dynamo.graph_break"))


def other(kind: str) -> ir.Expr:
    """A module-level value of `kind` that differs from `init(kind)`, so rebinding to it shows."""
    return {
        "int": ir.Const(3),
        "float": ir.Const(-1.5),
        "tensor": ir.call("torch.tensor", ir.Const(-0.25)),
        "list": ir.ListExpr((ir.Const(1), ir.Const(2), ir.Const(3))),
        "dict": ir.DictExpr(((ir.Const("n"), ir.Const(5)),)),
    }[kind]


def _getter_factory(draw, b: Builder, cell: Cell, writes: bool) -> str:
    """`def make(<cell>)` at module level returning a closure that reads its parameter's cell and, when
    `writes`, first rebinds or mutates it. Returns the factory's name."""
    maker = b.fresh("make_ag")
    body: list[ir.Stmt] = []
    nonlocals: list[str] = []
    if writes:
        stmts, rebinds = write(draw, cell, mean_of("t"))
        body += stmts
        nonlocals += [cell.name] if rebinds else []
    body.append(ir.Return(tanh(total(ir.Name("t"), read(cell)))))
    b.add_helper(ir.Def(maker, (ir.Param(cell.name),), (
        ir.Def("use", (ir.Param("t"),), with_nonlocal(nonlocals, body)),
        ir.Return(ir.Name("use")),
    )))
    return maker


@fragment(FAMILY, AGREE, "cells-same-object", weight=2, nestable=False)
def same_object_cells(draw, b: Builder) -> None:
    """Two distinct cells holding one module-level object: closures made by factories before compiling
    (or inside the region) from the same global; one rebinds or mutates its cell, the other reads."""
    cell = new_cell(draw, b, "v", only=MUTABLE)
    shared = b.fresh("SHARED")
    b.add_global(shared, init(cell.kind))
    writer = _getter_factory(draw, b, cell, writes=True)
    reader = _getter_factory(draw, b, cell, writes=False)
    made = {}
    preexisting = boolean(draw) or boolean(draw)  # 3 in 4: the cells exist before the compiled call
    for role, maker in (("w", writer), ("r", reader)):
        name = b.fresh("AG" if preexisting else "ag")
        if preexisting:
            b.add_global(name, ir.call(ir.Name(maker), ir.Name(shared)))
        else:
            b.emit(ir.Assign(ir.Name(name), ir.call(ir.Name(maker), ir.Name(shared))))
        made[role] = ir.Name(name)
    x, shape = operand(draw, b)
    order = choose(draw, ("rw", "wr", "rwr"))
    t: ir.Expr = x
    for role in order:
        t = b.bind(b.fresh("t"), ir.Call(made[role], (t,)), shape, 1.0).expr


@fragment(FAMILY, AGREE, "cells-same-name", weight=2, nestable=False)
def same_name_cells(draw, b: Builder) -> None:
    """A pre-existing closure's free variable and a local of the compiled frame share a name and start
    with the same object (or an equal value); then only one of them is rebound: the frame's local
    through `nonlocal` in a nested function, or the closure's cell through its setter."""
    kind = choose(draw, ("list", "int", "tensor", "dict", "float"))
    name = b.fresh("k")
    cell = Cell(name, kind)
    value = b.fresh("K")
    b.add_global(value, init(kind))
    maker, getter, setter = b.fresh("make_sn"), b.fresh("GET"), b.fresh("SET")
    b.add_helper(ir.Def(maker, (ir.Param(name),), (
        ir.Def("get", (ir.Param("t"),), (ir.Return(tanh(total(ir.Name("t"), read(cell)))),)),
        ir.Def("put", (ir.Param("v"),), (ir.Nonlocal((name,)), ir.Assign(cell.expr, ir.Name("v")))),
        ir.Return(ir.TupleExpr((ir.Name("get"), ir.Name("put")))),
    )))
    b.module.append(ir.Assign(ir.TupleExpr((ir.Name(getter), ir.Name(setter))),
                              ir.call(ir.Name(maker), ir.Name(value))))
    same_object = boolean(draw)
    b.emit(ir.Assign(cell.expr, ir.Name(value) if same_object else init(kind)))
    x, shape = operand(draw, b)
    t1 = b.bind(b.fresh("t"), ir.call(ir.Name(getter), x), shape, 1.0)
    rebind_local = boolean(draw)
    if rebind_local:
        stmts, _ = write(draw, cell, ir.Const(0.5), "rebind")
        bump = b.fresh("bump")
        b.emit(ir.Def(bump, (), (ir.Nonlocal((name,)), *stmts)), ir.ExprStmt(ir.call(ir.Name(bump))))
    else:
        b.emit(ir.ExprStmt(ir.call(ir.Name(setter), other(kind))))
    t2 = b.bind(b.fresh("t"), ir.call(ir.Name(getter), t1.expr), shape, 1.0)
    reader = b.fresh("rd")
    b.emit(ir.Def(reader, (ir.Param("t"),), (ir.Return(tanh(total(ir.Name("t"), read(cell)))),)))
    b.bind(b.fresh("t"), ir.call(ir.Name(reader), t2.expr), shape, 1.0)


@fragment(FAMILY, PREEXISTING, "preexisting-same-name", nestable=False)
def preexisting_same_name(draw, b: Builder) -> None:
    """A module-level factory called before compiling makes a closure whose free variable has the same
    name as a cell of the compiled frame, with a different value; the closure and the frame's own
    nested function each may write their cell, and both are read in turn."""
    name = b.fresh("k")
    theirs = Cell(name, choose(draw, ("int", "tensor", "list", "float", "dict")))
    ours = Cell(name, theirs.kind if boolean(draw) or boolean(draw) else choose(draw, ("int", "float")))
    maker, pre = b.fresh("make_pn"), b.fresh("PN")
    stmts, rebinds = write(draw, theirs, mean_of("t"))
    b.add_helper(ir.Def(maker, (ir.Param(name),), (
        ir.Def("use", (ir.Param("t"),), with_nonlocal([name] if rebinds else [], [
            *stmts, ir.Return(tanh(total(ir.BinOp(ir.Name("t"), "*", ir.Const(0.5)), read(theirs))))])),
        ir.Return(ir.Name("use")),
    )))
    b.add_global(pre, ir.call(ir.Name(maker), other(theirs.kind)))
    x, shape = operand(draw, b)
    b.emit(ir.Assign(ours.expr, init(ours.kind, x)))
    own, own_rebinds = write(draw, ours, mean_of("t")) if boolean(draw) else ([], False)
    local = b.fresh("lo")
    b.emit(ir.Def(local, (ir.Param("t"),), with_nonlocal([name] if own_rebinds else [], [
        *own, ir.Return(tanh(total(ir.Name("t"), read(ours))))])))
    t: ir.Expr = x
    for fn in choose(draw, ((pre, local, pre), (local, pre), (pre, local))):
        t = b.bind(b.fresh("t"), ir.call(ir.Name(fn), t), shape, 1.0).expr


@fragment(FAMILY, PREEXISTING, "preexisting-method", nestable=False)
def preexisting_method(draw, b: Builder) -> None:
    """A method of an object made before compiling reads a cell that another pre-existing function
    (made by the same factory) rebinds or mutates; the region reads, writes, reads again."""
    cell = new_cell(draw, b, "v")
    maker, cls, obj, writer = b.fresh("make_pm"), b.fresh("Reader"), b.fresh("PM"), b.fresh("PW")
    self_ = ir.Param("self")
    stmts, rebinds = write(draw, cell, mean_of("t"))
    b.add_helper(ir.Def(maker, (), (
        ir.Assign(cell.expr, init(cell.kind)),
        ir.ClassDef(cls, (), (
            ir.Def("look", (self_, ir.Param("t")), (ir.Return(tanh(total(ir.Name("t"), read(cell)))),)),
        )),
        ir.Def("touch", (ir.Param("t"),), with_nonlocal([cell.name] if rebinds else [], [
            *stmts, ir.Return(ir.Name("t"))])),
        ir.Return(ir.TupleExpr((ir.call(ir.Name(cls)), ir.Name("touch")))),
    )))
    b.module.append(ir.Assign(ir.TupleExpr((ir.Name(obj), ir.Name(writer))), ir.call(ir.Name(maker))))
    x, shape = operand(draw, b)
    t1 = b.bind(b.fresh("t"), ir.method(ir.Name(obj), "look", x), shape, 1.0)
    b.emit(ir.ExprStmt(ir.call(ir.Name(writer), t1.expr)))
    if boolean(draw):
        b.emit(GRAPH_BREAK)
        b.tag("preexisting-graph-break")
    b.bind(b.fresh("t"), ir.method(ir.Name(obj), "look", t1.expr), shape, 1.0)


@fragment(FAMILY, PREEXISTING, "preexisting-graph-break", nestable=False)
def preexisting_across_break(draw, b: Builder) -> None:
    """A closure made by a module-level factory before compiling, writing its own cell, called before
    and after a graph break (the resume function must see the first call's write)."""
    _, pc, _, _ = module_factory(draw, b)
    x, shape = operand(draw, b)
    t1 = b.bind(b.fresh("t"), ir.call(ir.Name(pc), x), shape, 1.0)
    b.emit(GRAPH_BREAK)
    t2 = b.bind(b.fresh("t"), ir.call(ir.Name(pc), t1.expr), shape, 1.0)
    if boolean(draw):
        b.emit(GRAPH_BREAK)
        b.bind(b.fresh("t"), ir.call(ir.Name(pc), t2.expr), shape, 1.0)


@fragment(FAMILY, PREEXISTING, "preexisting-fresh-writer", nestable=False)
def fresh_closure_writes_preexisting(draw, b: Builder) -> None:
    """A pre-existing function, called in the region, makes a fresh closure there that writes a cell
    created before compiling; a pre-existing getter reads that cell before and after."""
    cell = new_cell(draw, b, "v")
    maker, mk, get = b.fresh("make_fw"), b.fresh("FW_MAKE"), b.fresh("FW_GET")
    stmts, rebinds = write(draw, cell, ir.BinOp(mean_of("t"), "*", ir.Name("s")))
    b.add_helper(ir.Def(maker, (), (
        ir.Assign(cell.expr, init(cell.kind)),
        ir.Def("make_writer", (ir.Param("s"),), (
            ir.Def("w", (ir.Param("t"),), with_nonlocal([cell.name] if rebinds else [], [
                *stmts, ir.Return(ir.BinOp(ir.Name("t"), "*", ir.Name("s")))])),
            ir.Return(ir.Name("w")),
        )),
        ir.Def("get", (), (ir.Return(read(cell)),)),
        ir.Return(ir.TupleExpr((ir.Name("make_writer"), ir.Name("get")))),
    )))
    b.module.append(ir.Assign(ir.TupleExpr((ir.Name(mk), ir.Name(get))), ir.call(ir.Name(maker))))
    x, shape = operand(draw, b)
    before = b.bind(b.fresh("t"), tanh(total(x, ir.call(ir.Name(get)))), shape, 1.0)
    w = b.fresh("w")
    b.emit(ir.Assign(ir.Name(w), ir.call(ir.Name(mk), ir.Const(choose(draw, (0.5, -1.0))))))
    for _ in range(integer(draw, 1, 2)):
        b.bind(b.fresh("t"), tanh(ir.call(ir.Name(w), before.expr)), shape, 1.0)
    b.bind(b.fresh("t"), tanh(total(before.expr, ir.call(ir.Name(get)))), shape, 1.0)
    if boolean(draw):
        b.returns.append(ir.Name(w))
