"""The `basic` family: straight-line tensor code, a closure writing a `nonlocal`, global writes.

It is the first family the pipeline runs and the filler the other families
compose with: every program starts with some of these statements.
"""
from __future__ import annotations

from .. import ir, tensor_ops
from ..choose import choose, integer
from ..fragments import fragment


@fragment("basic", "pointwise", weight=3)
def pointwise(draw, b):
    expr, shape, bound = tensor_ops.unary(draw, tensor_ops.pick(draw, b))
    b.bind(b.fresh("t"), expr, shape, bound)


@fragment("basic", "binary", weight=3)
def binary(draw, b):
    expr, shape, bound = tensor_ops.compute(draw, b)
    b.bind(b.fresh("t"), expr, shape, bound)
    b.tag("compute")


@fragment("basic", "reduction")
def reduction(draw, b):
    var = tensor_ops.pick(draw, b)
    if not var.shape:
        expr, shape, bound = tensor_ops.unary(draw, var)
    else:
        expr, shape, bound = tensor_ops.reduce(draw, var)
    b.bind(b.fresh("t"), expr, shape, bound)


@fragment("basic", "view")
def view(draw, b):
    var = tensor_ops.pick(draw, b)
    if not var.shape:
        return
    expr, shape, bound = tensor_ops.view(draw, var)
    b.bind(b.fresh("v"), expr, shape, bound)


@fragment("basic", "matmul")
def matmul(draw, b):
    mats = [t for t in b.scope.visible_tensors() if len(t.shape) == 2]
    if not mats:
        return
    a = choose(draw, mats)
    ea, ba = tensor_ops.squash(a)
    expr = ir.BinOp(ea, "@", ir.method(ea, "t"))
    b.bind(b.fresh("m"), expr, (a.shape[0], a.shape[0]), ba * ba * a.shape[1])


@fragment("basic", "closure", "nonlocal", weight=2)
def closure_nonlocal(draw, b):
    """A nested function that reads and rebinds a cell of the enclosing function."""
    src = tensor_ops.pick(draw, b)
    cell = b.fresh("acc")
    start = choose(draw, ("tensor", "int"))
    init: ir.Expr = ir.Const(0) if start == "int" else ir.method(src.expr, "sum")
    b.emit(ir.Assign(ir.Name(cell), init))
    fn, param = b.fresh("bump"), "t"
    scaled, bound = tensor_ops.squash(src)
    body = (
        ir.Nonlocal((cell,)),
        ir.Assign(ir.Name(cell), ir.BinOp(ir.Name(cell), "+", ir.method(ir.call("torch.tanh", ir.Name(param)), "sum"))),
        ir.Return(ir.BinOp(ir.Name(param), "*", ir.Const(2))),
    )
    b.emit(ir.Def(fn, (ir.Param(param),), body))
    times = integer(draw, 1, 2)
    out = None
    for _ in range(times):
        out = b.bind(b.fresh("t"), ir.call(ir.Name(fn), scaled), src.shape, bound * 2)
    b.returns.append(ir.Name(cell))
    b.tag("closure", "nonlocal")
    del out


@fragment("basic", "global-write")
def global_write(draw, b):
    """Rebind a module global (a counter or a tensor accumulator) from inside the compiled code."""
    g = b.fresh("G_").upper()
    kind = choose(draw, ("counter", "tensor", "list"))
    b.declare("global", g) if kind != "list" else None
    if kind == "counter":
        b.add_global(g, ir.Const(0))
        b.emit(ir.AugAssign(ir.Name(g), "+", ir.Const(1)))
    elif kind == "tensor":
        var = tensor_ops.pick(draw, b)
        operand, _ = tensor_ops.squash(var)
        b.add_global(g, ir.Const(0.0))
        b.emit(ir.Assign(ir.Name(g), ir.BinOp(ir.Name(g), "+", ir.method(operand, "sum"))))
    else:
        var = tensor_ops.pick(draw, b)
        b.add_global(g, ir.ListExpr(()))
        b.emit(ir.ExprStmt(ir.method(ir.Name(g), "append", ir.BinOp(var.expr, "+", ir.Const(1)))))
        b.tag("list-append")
    b.tag("global-write")


@fragment("basic", "inplace")
def inplace(draw, b):
    """An in-place data op on a fresh intermediate (never on an input: that is the resizes family's job)."""
    var = tensor_ops.pick(draw, b)
    operand, bound = tensor_ops.squash(var)
    name = b.fresh("w")
    b.bind(name, ir.method(operand, "clone"), var.shape, bound)
    op = choose(draw, ("add_", "mul_", "sub_"))
    b.emit(ir.ExprStmt(ir.method(ir.Name(name), op, ir.Const(2))))
    b.scope.tensors[-1].bound = bound * 2 + 2


@fragment("basic", "nested-block", nestable=False)
def nested_block(draw, b):
    """A nested function whose body is drawn from the program's nestable fragments, called once.

    Its last tensor and anything its fragments chose to return come back as one tuple, so what the
    body computed (and the state it touched through cells, globals and objects) reaches the outputs.
    """
    if b.depth or not b.nestable:
        return
    name, out = b.fresh("block"), b.fresh("nb")
    returns_before = len(b.returns)
    with b.nested(name) as scope:
        for _ in range(1 + integer(draw, 0, 1)):
            frag = b.pick(draw, b.nestable)
            frag.draw(draw, b)
            b.tag(*frag.tags)
        last = scope.tensors[-1]
        inner = b.returns[returns_before:]
        del b.returns[returns_before:]
        scope.stmts.append(ir.Return(ir.TupleExpr((last.expr, *inner))))
    b.emit(ir.Assign(ir.Name(out), ir.call(ir.Name(name))))
    b.bind(b.fresh("t"), ir.Sub(ir.Name(out), ir.Const(0)), last.shape, last.bound, last.requires_grad)
    b.returns.extend(ir.Sub(ir.Name(out), ir.Const(i + 1)) for i in range(len(inner)))
    b.tag("nested-block")
