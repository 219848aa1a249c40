"""Closures fragments built from other callables: lambdas, default arguments, `functools.partial`,
recursion through a closure, and methods using `super()` (the `__class__` cell) with closures inside."""
from __future__ import annotations

from .. import ir
from ..choose import boolean, choose, integer
from ..fragments import fragment
from .cells import FAMILY, MUTABLE, Cell, init, mean_of, new_cell, operand, read, tanh, total, with_nonlocal, write


@fragment(FAMILY, "lambda", nestable=False)
def lambda_closure(draw, b) -> None:
    """A lambda over an entry cell that is rebound after the lambda was made (late binding), and maybe a
    second lambda that calls the first."""
    x, shape = operand(draw, b)
    cell = new_cell(draw, b)
    b.emit(ir.Assign(cell.expr, init(cell.kind, x)))
    lam = b.fresh("lam")
    t = ir.Name("t")
    b.emit(ir.Assign(ir.Name(lam), ir.Lambda(("t",), tanh(total(ir.BinOp(t, "*", ir.Const(0.5)), read(cell))))))
    if boolean(draw):
        stmts, _ = write(draw, cell, ir.Const(0.5))
        b.emit(*stmts)
    if boolean(draw):
        outer = b.fresh("lam")
        b.emit(ir.Assign(ir.Name(outer), ir.Lambda(("t",), ir.BinOp(ir.call(ir.Name(lam), t), "*", ir.Const(2)))))
        lam = outer
    b.bind(b.fresh("t"), ir.call(ir.Name(lam), x), shape, 2.0)


@fragment(FAMILY, "default-arg", nestable=False)
def default_arg(draw, b) -> None:
    """A nested function whose default argument is an entry cell's value at `def` time; the cell is then
    rebound (the default must not follow), and a mutable default may be mutated in place (it must)."""
    x, shape = operand(draw, b)
    cell = new_cell(draw, b)
    b.emit(ir.Assign(cell.expr, init(cell.kind, x)))
    k = Cell("k", cell.kind)
    body: list[ir.Stmt] = []
    if cell.kind in MUTABLE and boolean(draw):
        body += write(draw, k, mean_of("t"), "mutate")[0]
    body.append(ir.Return(tanh(total(ir.Name("t"), read(k), ir.Name("n")))))
    fn = b.fresh("da")
    params = (ir.Param("t"), ir.Param("k", cell.expr), ir.Param("n", ir.Const(integer(draw, 1, 3))))
    b.emit(ir.Def(fn, params, tuple(body)))
    stmts, _ = write(draw, cell, ir.Const(0.5), "rebind")
    b.emit(*stmts)
    for _ in range(integer(draw, 1, 2)):
        b.bind(b.fresh("t"), ir.call(ir.Name(fn), x), shape, 1.0)
    b.returns.append(cell.expr)


@fragment(FAMILY, "partial", nestable=False)
def partial_closure(draw, b) -> None:
    """`functools.partial` of a closure that rebinds or mutates an entry cell, bound positionally or by
    keyword."""
    b.add_import(ir.Import("functools"))
    x, shape = operand(draw, b)
    cell = new_cell(draw, b)
    b.emit(ir.Assign(cell.expr, init(cell.kind, x)))
    stmts, rebinds = write(draw, cell, mean_of("t"))
    fn, part = b.fresh("pf"), b.fresh("pp")
    body = [*stmts, ir.Return(tanh(total(ir.BinOp(ir.Name("t"), "*", ir.Name("k")), read(cell))))]
    b.emit(ir.Def(fn, (ir.Param("k"), ir.Param("t")), with_nonlocal([cell.name] if rebinds else [], body)))
    scale = ir.Const(choose(draw, (0.5, 2.0)))
    if boolean(draw):
        b.emit(ir.Assign(ir.Name(part), ir.call("functools.partial", ir.Name(fn), scale)))
        result = ir.call(ir.Name(part), x)
    else:
        b.emit(ir.Assign(ir.Name(part), ir.call("functools.partial", ir.Name(fn), k=scale)))
        result = ir.call(ir.Name(part), t=x)
    b.bind(b.fresh("t"), result, shape, 1.0)
    b.returns.append(cell.expr)


@fragment(FAMILY, "recursion", nestable=False)
def recursion(draw, b) -> None:
    """A closure that calls itself through the entry's cell holding it (bounded depth), counting calls
    in another cell."""
    x, shape = operand(draw, b)
    count = Cell(b.fresh("c"), "int")
    b.emit(ir.Assign(count.expr, ir.Const(0)))
    fn = b.fresh("rec")
    t, n = ir.Name("t"), ir.Name("n")
    b.emit(ir.Def(fn, (ir.Param("t"), ir.Param("n")), (
        ir.Nonlocal((count.name,)),
        ir.Assign(count.expr, ir.BinOp(count.expr, "+", ir.Const(1))),
        ir.If(ir.BinOp(n, "<=", ir.Const(0)), (ir.Return(t),)),
        ir.Return(ir.call(ir.Name(fn), ir.BinOp(tanh(t), "*", ir.Const(0.5)), ir.BinOp(n, "-", ir.Const(1)))),
    )))
    b.bind(b.fresh("t"), ir.call(ir.Name(fn), x, ir.Const(integer(draw, 1, 4))), shape, 2.0)
    b.returns.append(count.expr)


@fragment(FAMILY, "super-class-cell", "method-closure", nestable=False)
def class_with_super(draw, b) -> None:
    """A base class and a subclass whose `__init__` and method call `super()` (so they close over the
    `__class__` cell) and whose method defines and calls a closure; the instance is made at module
    level before compiling, or inside the compiled region."""
    base, kid = b.fresh("Base"), b.fresh("Kid")
    self_, t, u = ir.Name("self"), ir.Name("t"), ir.Name("u")
    b.add_helper(ir.ClassDef(base, (), (
        ir.Def("__init__", (ir.Param("self"), ir.Param("k")), (ir.Assign(ir.Attr(self_, "k"), ir.Name("k")),)),
        ir.Def("scale", (ir.Param("self"), ir.Param("t")), (ir.Return(ir.BinOp(t, "*", ir.Attr(self_, "k"))),)),
    )))
    calls = ir.Attr(self_, "calls")
    inner_body = (ir.Return(tanh(total(u, ir.Name("base"), ir.BinOp(ir.Attr(self_, "k"), "*", calls)))),)
    b.add_helper(ir.ClassDef(kid, (ir.Name(base),), (
        ir.Def("__init__", (ir.Param("self"), ir.Param("k")), (
            ir.ExprStmt(ir.method(ir.call("super"), "__init__", ir.Name("k"))),
            ir.Assign(calls, ir.Const(0)),
        )),
        ir.Def("scale", (ir.Param("self"), ir.Param("t")), (
            ir.Assign(calls, ir.BinOp(calls, "+", ir.Const(1))),
            ir.Assign(ir.Name("base"), ir.method(ir.call("super"), "scale", t)),
            ir.Def("inner", (ir.Param("u"),), inner_body),
            ir.Return(ir.call(ir.Name("inner"), t)),
        )),
    )))
    x, shape = operand(draw, b)
    k = ir.Const(choose(draw, (0.5, -1.0)))
    if boolean(draw):
        obj = b.fresh("OBJ")
        b.add_global(obj, ir.call(ir.Name(kid), k))
    else:
        obj = b.fresh("obj")
        b.emit(ir.Assign(ir.Name(obj), ir.call(ir.Name(kid), k)))
        b.returns.append(ir.Attr(ir.Name(obj), "calls"))
    b.bind(b.fresh("t"), ir.method(ir.Name(obj), "scale", x), shape, 1.0)
