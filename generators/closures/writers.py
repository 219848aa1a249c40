"""Closures fragments where a function defined before the compiled frame writes a cell that something else
then reads, and where the frame makes a closure through such a function.

`preexisting-writer`: a module-level factory, called before compiling, makes a writer over its cell and a
class whose methods read that cell; the frame creates an instance (or uses one made before compiling) and
the write and the read meet in one of three orders: the method calls the writer passed to it and then reads,
the writer calls the method after writing, or the frame calls the writer and then the method. A method of an
object created in the frame is a function Dynamo reaches without a source; torch 2.5 modelled the cells of
such a function by their contents, so the read missed the write (pytorch#140150).

`maker-closure`: a pre-existing function, called in the frame, makes a closure over its factory's cell; the
closure writes that cell and is kept across a graph break, escapes (returned or stored), or is called where
the frame has a local of the same name as the closure's free variable (pytorch#140036, #140149: on torch 2.5
a crash in `bind_args`, or the frame's local read for the cell).
"""
from __future__ import annotations

from .. import ir
from ..builder import Builder
from ..choose import boolean, choose
from ..fragments import fragment
from .agree import GRAPH_BREAK, other
from .cells import (
    FAMILY,
    Cell,
    init,
    log_between_call,
    mean_of,
    operand,
    read,
    store_escaped,
    tanh,
    total,
    with_nonlocal,
    write,
)

WRITER = "preexisting-writer"
MAKER = "maker-closure"
CELL_KINDS = ("int", "tensor", "float", "list", "dict")
SELF = ir.Param("self")


def _reader_class(cell: Cell) -> ir.ClassDef:
    """`class Reader` with `look(t)` reading the cell, and `run(fn, t)` calling `fn(t)` before reading it."""
    t = ir.Name("t")
    return ir.ClassDef("Reader", (), (
        ir.Def("look", (SELF, ir.Param("t")), (ir.Return(tanh(total(t, read(cell)))),)),
        ir.Def("run", (SELF, ir.Param("fn"), ir.Param("t")), (
            ir.ExprStmt(ir.call(ir.Name("fn"), t)),
            ir.Return(tanh(total(t, read(cell)))),
        )),
    ))


@fragment(FAMILY, WRITER, weight=2, nestable=False)
def preexisting_writer(draw, b: Builder) -> None:
    """A pre-existing writer of a cell, and a method of an object (usually created in the frame) reading it."""
    cell = Cell(b.fresh("v"), choose(draw, CELL_KINDS))
    form = choose(draw, ("method-calls-writer", "writer-calls-method", "writer-then-method"))
    stmts, rebinds = write(draw, cell, mean_of("t"))
    calls_method = form == "writer-calls-method"
    params = (ir.Param("obj"), ir.Param("t")) if calls_method else (ir.Param("t"),)
    result: ir.Expr = ir.method(ir.Name("obj"), "look", ir.Name("t")) if calls_method else ir.Name("t")
    maker, writer, cls = b.fresh("make_pw"), b.fresh("PW_WRITE"), b.fresh("PW_READER")
    b.add_helper(ir.Def(maker, (), (
        ir.Assign(cell.expr, init(cell.kind)),
        ir.Def("bump", params, with_nonlocal([cell.name] if rebinds else [], [*stmts, ir.Return(result)])),
        _reader_class(cell),
        ir.Return(ir.TupleExpr((ir.Name("bump"), ir.Name("Reader")))),
    )))
    b.module.append(ir.Assign(ir.TupleExpr((ir.Name(writer), ir.Name(cls))), ir.call(ir.Name(maker))))
    x, shape = operand(draw, b)
    obj = b.fresh("obj")
    if boolean(draw) or boolean(draw):  # 3 in 4: the reader is made in the frame, a function without a source
        b.emit(ir.Assign(ir.Name(obj), ir.call(ir.Name(cls))))
    else:
        obj = obj.upper()
        b.add_global(obj, ir.call(ir.Name(cls)))
        b.tag("writer-reader-preexisting")
    o = ir.Name(obj)
    if form == "method-calls-writer":
        r = b.bind(b.fresh("t"), ir.method(o, "run", ir.Name(writer), x), shape, 1.0)
    elif calls_method:
        r = b.bind(b.fresh("t"), ir.call(ir.Name(writer), o, x), shape, 1.0)
    else:
        b.emit(ir.ExprStmt(ir.call(ir.Name(writer), x)))
        r = b.bind(b.fresh("t"), ir.method(o, "look", x), shape, 1.0)
    if boolean(draw):
        b.bind(b.fresh("t"), ir.method(o, "look", r.expr), shape, 1.0)
    b.tag(f"writer-{form}", f"writer-{cell.kind}")


@fragment(FAMILY, MAKER, weight=3, nestable=False)
def maker_closure(draw, b: Builder) -> None:
    """A closure made in the frame by a pre-existing function over its factory's cell, which it writes."""
    cell = Cell(b.fresh("v"), choose(draw, CELL_KINDS))
    form = choose(draw, ("kept-across-break", "escapes", "local-collision"))
    stmts, rebinds = write(draw, cell, mean_of("t"))
    factory, make = b.fresh("make_mc"), b.fresh("MC_MAKE")
    use_body = [*stmts, ir.Return(tanh(total(ir.Name("t"), read(cell))))] if boolean(draw) or \
        form == "kept-across-break" else [ir.Return(tanh(total(ir.Name("t"), read(cell))))]
    b.add_helper(ir.Def(factory, (), (
        ir.Assign(cell.expr, init(cell.kind)),
        ir.Def("make", (), (
            ir.Def("use", (ir.Param("t"),), with_nonlocal([cell.name] if rebinds and len(use_body) > 1 else [],
                                                          use_body)),
            ir.Return(ir.Name("use")),
        )),
        ir.Return(ir.Name("make")),
    )))
    b.add_global(make, ir.call(ir.Name(factory)))
    x, shape = operand(draw, b)
    fn = b.fresh("use")
    if form == "local-collision":  # a plain local of the frame named like the closure's free variable, same kind
        b.emit(ir.Assign(cell.expr, other(cell.kind)))
    b.emit(ir.Assign(ir.Name(fn), ir.call(ir.Name(make))))
    r = b.bind(b.fresh("t"), ir.call(ir.Name(fn), x), shape, 1.0)
    if form == "kept-across-break":
        b.emit(GRAPH_BREAK)
        b.bind(b.fresh("t"), ir.call(ir.Name(fn), r.expr), shape, 1.0)
    elif form == "escapes":
        if boolean(draw):
            b.returns.append(ir.Name(fn))
        else:
            log_between_call(b, store_escaped(draw, b, ir.Name(fn)), ir.call("torch.ones", ir.Const(1)))
    else:
        b.bind(b.fresh("t"), tanh(total(r.expr, read(cell))), shape, 1.0)
    b.tag(f"maker-{form}", f"maker-{cell.kind}")
