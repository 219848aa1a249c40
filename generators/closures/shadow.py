"""Closures fragment where a cell the compiled frame captures and a cell of a function defined before it
share a name and start with the same object (`cells-shadow`).

The entry is made by a factory (`preexisting.entry_factory`), so it captures a cell of its own; a
module-level factory called before compiling makes a getter and a setter over a second cell of the same
name, started from the same module-level object (a small int is one object everywhere). Then one of the two
is rebound and the other read: the frame rebinds its own cell (`nonlocal`) and the pre-existing getter reads
its cell, or the pre-existing setter rebinds its cell and the frame reads its own. A compiler that finds a
pre-existing cell by its name and the identity of its contents, instead of by the cell itself, takes one
cell for the other: torch 2.5's `match_nested_cell` did (a wrong value, or under `fullgraph=True` the refusal
"write to __closure__ while inlining"; fixed by pytorch#140436). Drawn with and without `fullgraph=True`.
"""
from __future__ import annotations

from .. import ir
from ..builder import Builder
from ..choose import boolean, choose
from ..fragments import fragment
from .agree import other
from .cells import FAMILY, Cell, init, operand, read, tanh, total, write
from .preexisting import entry_factory, publish

CONSTRUCT = "cells-shadow"
# Who rebinds, who reads, in order: "own" the frame's cell, "get"/"put" the pre-existing pair.
ORDERS = {
    "own-then-get": ("write-own", "get"),
    "put-then-own": ("put", "read-own"),
    "get-own-get": ("get", "write-own", "get"),
    "put-own-get": ("put", "read-own", "get"),
}


def _pair(b: Builder, cell: Cell, start: ir.Expr) -> tuple[str, str]:
    """`GET, PUT = make()` at module level over a cell named like the frame's, started from `start`."""
    maker, get, put = b.fresh("make_sh"), b.fresh("SH_GET"), b.fresh("SH_PUT")
    t, v = ir.Name("t"), ir.Name("v")
    b.add_helper(ir.Def(maker, (), (
        ir.Assign(cell.expr, start),
        ir.Def("get", (ir.Param("t"),), (ir.Return(tanh(total(t, read(cell)))),)),
        ir.Def("put", (ir.Param("v"),), (ir.Nonlocal((cell.name,)), ir.Assign(cell.expr, v))),
        ir.Return(ir.TupleExpr((ir.Name("get"), ir.Name("put")))),
    )))
    b.module.append(ir.Assign(ir.TupleExpr((ir.Name(get), ir.Name(put))), ir.call(ir.Name(maker))))
    return get, put


@fragment(FAMILY, CONSTRUCT, weight=3, nestable=False)
def shadow_cells(draw, b: Builder) -> None:
    """The frame's captured cell and a pre-existing function's cell: one name, one object; one rebound."""
    kind = choose(draw, ("int", "list", "tensor", "dict", "float"))
    cell = Cell(b.fresh("k"), kind)
    if kind == "int":
        start: ir.Expr = init(kind)  # one small-int object in both cells
    else:
        shared = b.fresh("SHADOW")
        b.add_global(shared, init(kind))
        start = ir.Name(shared)
    get, put = _pair(b, cell, start)
    fac = entry_factory(b)
    fac.stmts.append(ir.Assign(cell.expr, start))
    publish(b, fac)
    order = choose(draw, tuple(ORDERS))
    x, shape = operand(draw, b)
    t: ir.Expr = x
    for step in ORDERS[order]:
        if step == "write-own":
            b.declare("nonlocal", cell.name)
            stmts, _ = write(draw, cell, ir.Const(0.5), "rebind")
            b.emit(*stmts)
        elif step == "put":
            b.emit(ir.ExprStmt(ir.call(ir.Name(put), other(kind))))
        elif step == "get":
            t = b.bind(b.fresh("t"), ir.call(ir.Name(get), t), shape, 1.0).expr
        else:
            t = b.bind(b.fresh("t"), tanh(total(t, read(cell))), shape, 1.0).expr
    if boolean(draw):
        b.compile_options["fullgraph"] = True
        b.tag("fullgraph", "shadow-fullgraph")
    b.tag(f"shadow-{order}", f"shadow-{kind}")
