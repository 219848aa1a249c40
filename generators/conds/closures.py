"""Conds whose branches close over different outer tensors (issue 14, construct 6).

The two branches of a `torch.cond` read two distinct outer tensors of the same shape and dtype, so a
compiler that feeds one branch the other's closure gives a wrong value, not an error. The predicate
reads a private input whose sign flips between calls, so each branch is taken on some call, and the
one not taken first is the one that reads something the other does not (a module global, a second
captured tensor). A nested variant's inner branch reads a local of the outer branch.
"""
from __future__ import annotations

from .. import ir, tensor_ops
from ..builder import Builder, TensorVar
from ..choose import choose, integer
from ..fragments import fragment
from .nested import COND, _start

CONSTRUCT = "cond-closures"
PRED_LEN = 4
PRED_SIGNS = ((0.5, -0.5, 0.5), (-0.5, 0.5, -0.5))  # per call: which branch is taken goes each way


def _flipping_input(draw, b: Builder) -> ir.Expr:
    """A private input whose mean changes sign on every call; the predicate `q.mean() > 0` reads it."""
    name = b.fresh("q")
    signs = choose(draw, PRED_SIGNS)
    b.add_input(name, (PRED_LEN,), offset=signs[0])
    b.root.tensors.pop()  # private: nothing else may mutate it
    param = b.params[-1]
    for call, off in enumerate(signs[1:], start=1):
        param.per_call[call] = ir.call("torch.linspace", ir.Const(-1.0 + off), ir.Const(1.0 + off),
                                       ir.Const(PRED_LEN), device=ir.Name("device"))
    b.calls = max(b.calls, len(signs))
    b.tag("pred-flips")
    return ir.BinOp(ir.method(ir.Name(name), "mean"), ">", ir.Const(0.0))


def _outer_pair(draw, b: Builder, op: TensorVar) -> tuple[ir.Name, ir.Name]:
    """Two distinct outer tensors shaped like `op`: equal shape and dtype, different values."""
    operand, _ = tensor_ops.squash(op)
    first, second = b.fresh("w"), b.fresh("w")
    b.bind(first, ir.call("torch.sin", operand), op.shape, 1.0)
    if integer(draw, 0, 2) == 0:  # the second is a module global the compiled frame reads
        second = second.upper()
        b.add_global(second, ir.call("torch.full", ir.TupleExpr(tuple(ir.Const(n) for n in op.shape)),
                                     ir.Const(0.75)))
        b.tag("cond-closure-global")
        return ir.Name(first), ir.Name(second)
    b.bind(second, ir.BinOp(ir.call("torch.cos", operand), "-", ir.Const(0.5)), op.shape, 1.5)
    return ir.Name(first), ir.Name(second)


def _branch(b: Builder, body: list[ir.Stmt], result: ir.Expr, a: str) -> ir.Name:
    name = b.fresh("br")
    b.emit(ir.Def(name, (ir.Param(a),), (*body, ir.Return(result))))
    return ir.Name(name)


@fragment("conds", CONSTRUCT, weight=2, nestable=False)
def cond_closures(draw, b):
    """`torch.cond` whose branches each read their own outer tensor (same shape and dtype), the predicate
    flipping between calls; optionally the inner cond of a branch reads that branch's local."""
    _start(b)
    pool = [t for t in b.scope.visible_tensors() if not t.requires_grad and t.shape]
    if not pool:
        return
    op = choose(draw, pool)
    operand, bound = tensor_ops.squash(op)
    w_true, w_false = _outer_pair(draw, b, op)
    pred = _flipping_input(draw, b)
    a = b.fresh("a")
    pa = ir.Name(a)
    nested = integer(draw, 0, 2) == 0
    if nested:
        loc, inner = b.fresh("loc"), b.fresh("i")
        inner_pred = ir.BinOp(ir.method(pa, "mean"), ">", ir.Const(choose(draw, (0.0, 0.25))))
        inner_call = ir.call(COND, inner_pred, ir.Lambda((inner,), ir.BinOp(ir.Name(inner), "+", ir.Name(loc))),
                             ir.Lambda((inner,), ir.BinOp(ir.Name(inner), "-", ir.Name(loc))), ir.TupleExpr((pa,)))
        body = [ir.Assign(ir.Name(loc), ir.BinOp(ir.call("torch.tanh", pa), "*", w_true))]
        true_fn = _branch(b, body, inner_call, a)
        b.tag("cond-nested-outer-local", "cond-depth-2")
    else:
        true_fn = _branch(b, [], ir.BinOp(ir.call("torch.tanh", pa), "+", w_true), a)
    false_fn = _branch(b, [], ir.BinOp(ir.call("torch.sin", pa), "*", w_false), a)
    r = b.fresh("r")
    b.bind(r, ir.call(COND, pred, true_fn, false_fn, ir.TupleExpr((operand,))), op.shape, bound + 2.0)
    b.tag("cond", "cond-depth-1", "pred-tensor", "branch-inline")
