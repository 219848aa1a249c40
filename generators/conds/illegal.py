"""Illegal-on-purpose conds: a branch mutating a cell, a list or an operand, or branches whose outputs
do not match. Dynamo (and so eager-mode `torch.cond`, which runs it) is documented to refuse each with
the exception `ILLEGAL` names; the program carries it as its `intended_error`.
"""
from __future__ import annotations

from .. import ir, tensor_ops
from ..fragments import fragment
from .nested import COND, ILLEGAL, THRESHOLDS, _start, chance, choose


@fragment("conds", "cond", weight=1, nestable=False)
def illegal_cond(draw, b):
    """A cond Dynamo must refuse: a branch mutating a cell, a list or an operand, or mismatched outputs."""
    _start(b)
    # After a branch closing over an `.item()` float under fullgraph, Dynamo fails at that legal cond
    # (corpus/cond_branch_item_float_crash.py) and the refusal of the illegal one is never reached.
    if b.intended_error is not None or "unbacked-float" in b.tags:
        return
    kind = choose(draw, tuple(ILLEGAL))
    b.intended_error = ILLEGAL[kind]
    b.tag(f"illegal-{kind}")
    src = tensor_ops.pick(draw, b)
    operand, _ = tensor_ops.squash(src)
    a = b.fresh("a")
    pa = ir.Name(a)
    good = ir.call("torch.sin", pa)
    body: list[ir.Stmt]
    if kind == "mutate-operand":
        op = b.fresh("o")
        b.emit(ir.Assign(ir.Name(op), ir.method(operand, "clone")))
        operand = ir.Name(op)
        body = [ir.ExprStmt(ir.method(pa, "add_", ir.Const(1))), ir.Return(ir.BinOp(pa, "*", ir.Const(2)))]
    elif kind == "mutate-cell":
        cell = b.fresh("cnt")
        b.emit(ir.Assign(ir.Name(cell), ir.Const(0)))
        body = [ir.Nonlocal((cell,)), ir.Assign(ir.Name(cell), ir.BinOp(ir.Name(cell), "+", ir.Const(1))),
                ir.Return(good)]
        b.returns.append(ir.Name(cell))
    elif kind == "mutate-list":
        lst = b.fresh("LOG").upper()
        b.add_global(lst, ir.ListExpr(()))
        body = [ir.ExprStmt(ir.method(ir.Name(lst), "append", ir.method(pa, "sum"))),
                ir.Return(good)]
    elif kind == "output-count":
        body = [ir.Return(ir.TupleExpr((good, ir.BinOp(pa, "+", ir.Const(1)))))]
    else:
        body = [ir.Return(ir.method(ir.BinOp(pa, "*", ir.Const(4)), "to", ir.dotted("torch.int32")))]
    fname = b.fresh("br")
    b.emit(ir.Def(fname, (ir.Param(a),), tuple(body)))
    other = ir.Lambda((a,), ir.TupleExpr((good,)) if kind == "output-count" else ir.BinOp(pa, "-", ir.Const(1)))
    # A tensor predicate: with a Python bool, torch.cond runs only the taken branch and checks nothing.
    pred = ir.BinOp(ir.method(ir.call("torch.tanh", src.expr), "mean"), ">",
                    ir.Const(choose(draw, THRESHOLDS)))
    b.tag("pred-tensor")
    true_fn, false_fn = (ir.Name(fname), other) if chance(draw, 2) else (other, ir.Name(fname))
    r = b.fresh("r")
    b.emit(ir.Assign(ir.Name(r), ir.call(COND, pred, true_fn, false_fn, ir.TupleExpr((operand,)))))
    b.returns.append(ir.Name(r))
