"""Shape- and magnitude-tracked tensor expressions that every family draws from.

Each helper returns `(expr, shape, bound)` for a valid, finite computation over
tensors that are already visible; the bound keeps repeated products finite.
"""
from __future__ import annotations

from . import ir
from .builder import BOUND_LIMIT, Builder, TensorVar
from .choose import boolean, choose, integer

UNARY_BOUNDED = ("torch.sin", "torch.cos", "torch.tanh", "torch.sigmoid")
UNARY_SAME = ("torch.relu", "torch.abs", "torch.neg")
METHOD_UNARY = ("sin", "cos", "tanh", "relu", "abs", "neg")


def squash(var: TensorVar) -> tuple[ir.Expr, float]:
    """The tensor as an operand; wrapped in tanh when its bound is too large to grow safely."""
    if var.bound > BOUND_LIMIT:
        return ir.call("torch.tanh", var.expr), 1.0
    return var.expr, var.bound


def pick(draw, b: Builder, *, ndim: int | None = None) -> TensorVar:
    """A visible tensor, preferring the most recently bound (shrinks toward the first input)."""
    pool = [t for t in b.scope.visible_tensors() if ndim is None or len(t.shape) == ndim]
    if not pool:
        pool = b.scope.visible_tensors()
    return choose(draw, pool)


def unary(draw, var: TensorVar) -> tuple[ir.Expr, tuple[int, ...], float]:
    operand, bound = squash(var)
    fn = choose(draw, UNARY_BOUNDED + UNARY_SAME + ("method",))
    if fn == "method":
        meth = choose(draw, METHOD_UNARY)
        return ir.method(operand, meth), var.shape, 1.0 if meth in ("sin", "cos", "tanh") else bound
    return ir.call(fn, operand), var.shape, 1.0 if fn in UNARY_BOUNDED else bound


def scalar_affine(draw, var: TensorVar) -> tuple[ir.Expr, tuple[int, ...], float]:
    operand, bound = squash(var)
    scale = choose(draw, (2, 0.5, -1.5, 3))
    shift = choose(draw, (1, -0.25, 2))
    return ir.BinOp(ir.BinOp(operand, "*", ir.Const(scale)), "+", ir.Const(shift)), var.shape, bound * abs(scale) + 2


def binary(draw, a: TensorVar, b_: TensorVar) -> tuple[ir.Expr, tuple[int, ...], float] | None:
    """`a op b` when the shapes broadcast (equal, or b's shape a suffix of a's)."""
    if a.shape != b_.shape and a.shape[-len(b_.shape):] != b_.shape:
        return None
    ea, ba = squash(a)
    eb, bb = squash(b_)
    op = choose(draw, ("+", "*", "-"))
    bound = ba * bb if op == "*" else ba + bb
    return ir.BinOp(ea, op, eb), a.shape, bound


def reduce(draw, var: TensorVar) -> tuple[ir.Expr, tuple[int, ...], float]:
    operand, bound = squash(var)
    kind = choose(draw, ("sum", "mean", "amax"))
    if len(var.shape) >= 2 and boolean(draw):
        dim = integer(draw, 0, len(var.shape) - 1)
        shape = var.shape[:dim] + var.shape[dim + 1:]
        factor = var.shape[dim] if kind == "sum" else 1
        return ir.method(operand, kind, ir.Const(dim)), shape, bound * factor
    factor = var.numel if kind == "sum" else 1
    return ir.method(operand, kind), (), bound * max(factor, 1)


def view(draw, var: TensorVar) -> tuple[ir.Expr, tuple[int, ...], float]:
    """A view: transpose, reshape to 1-D, unsqueeze, or a leading slice."""
    choices = ["flatten", "unsqueeze"]
    if len(var.shape) == 2:
        choices.append("t")
    if var.shape and var.shape[0] > 1:
        choices.append("slice")
    kind = choose(draw, choices)
    if kind == "t":
        return ir.method(var.expr, "t"), (var.shape[1], var.shape[0]), var.bound
    if kind == "flatten":
        return ir.method(var.expr, "reshape", ir.Const(-1)), (var.numel,), var.bound
    if kind == "unsqueeze":
        return ir.method(var.expr, "unsqueeze", ir.Const(0)), (1, *var.shape), var.bound
    stop = integer(draw, 1, var.shape[0] - 1)
    return ir.Sub(var.expr, ir.Slice(None, ir.Const(stop))), (stop, *var.shape[1:]), var.bound


def compute(draw, b: Builder) -> tuple[ir.Expr, tuple[int, ...], float]:
    """Any one of the above over visible tensors: the generic 'some tensor computation'."""
    a = pick(draw, b)
    kind = choose(draw, ("unary", "affine", "binary", "reduce", "view"))
    if kind == "binary":
        other = pick(draw, b)
        result = binary(draw, a, other) or binary(draw, other, a)
        if result is not None:
            return result
        kind = "unary"
    if kind == "reduce" and a.shape:
        return reduce(draw, a)
    if kind == "view" and a.shape:
        return view(draw, a)
    if kind == "affine":
        return scalar_affine(draw, a)
    return unary(draw, a)
