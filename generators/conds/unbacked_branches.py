"""`torch.cond` branches and unbacked sizes together (`cond-unbacked-branches`), compiled with
`capture_scalar_outputs` so that `.item()` stays in the graph.

Two forms. Closing over: `.item()` counts of a private input that changes per call give unbacked ints, and
each branch closes over its own one (in arithmetic, as the length of `new_ones`, or through a tensor sized by
it); in a nested form the count is taken inside a `def` branch and an inner cond closes over it. Sized by
their own values: each branch returns a tensor whose length is data-dependent (`masked_select`, a boolean
mask, `new_ones(count)`) with its own threshold, so the two outputs have different unbacked lengths, and the
program reads the result's values and length. Lifting unbacked symbols into branch subgraphs and binding a
cond output's fresh unbacked sizes came late to Dynamo (pytorch#138363, #148206): torch 2.5 raised
`GuardOnDataDependentSymNode` on the second form. The predicate reads a private input whose sign flips on
every call, so both branches run; drawn with and without `fullgraph=True`.
"""
from __future__ import annotations

from .. import ir
from ..builder import Builder, TensorVar
from ..choose import boolean, choose
from ..fragments import fragment
from .closures import _flipping_input
from .nested import COND, _start
from .unbacked import DATA_LEN, _data_input

CONSTRUCT = "cond-unbacked-branches"
CUTS = (0.0, 0.25, -0.5, 0.5)


def _count(data: ir.Expr, cut: float) -> ir.Expr:
    return ir.method(ir.method(ir.BinOp(data, ">", ir.Const(cut)), "sum"), "item")


def _use(draw, u: ir.Expr, a: ir.Name, is_int: bool = True) -> ir.Expr:
    """A tensor shaped like the branch operand `a` that depends on `u` (an unbacked int, or a 0-d tensor)."""
    how = choose(draw, ("add", "ones", "scale"))
    if how == "ones" and is_int:
        return ir.BinOp(ir.call("torch.sin", a), "+", ir.method(ir.method(a, "new_ones", u), "sum"))
    if how == "scale":
        return ir.BinOp(ir.call("torch.tanh", a), "*", ir.BinOp(u, "+", ir.Const(1)))
    return ir.BinOp(ir.call("torch.cos", a), "-", u)


def _closing_over(draw, b: Builder, data: str, op: TensorVar, pred: ir.Expr) -> ir.Expr:
    """A cond whose branches each close over an unbacked count (or a tensor sized by one)."""
    a = b.fresh("a")
    pa = ir.Name(a)
    if boolean(draw) and not b.compile_options.get("fullgraph"):  # nested: the count is taken in the branch
        inner, c = b.fresh("i"), b.fresh("c")
        inner_pred = ir.BinOp(ir.method(pa, "mean"), ">", ir.Const(choose(draw, (0.0, 0.25))))
        body = (ir.Assign(ir.Name(c), _count(ir.Name(data), choose(draw, CUTS))),
                ir.Return(ir.call(COND, inner_pred, ir.Lambda((inner,), _use(draw, ir.Name(c), ir.Name(inner))),
                                  ir.Lambda((inner,), ir.BinOp(ir.Name(inner), "-", ir.Name(c))),
                                  ir.TupleExpr((pa,)))))
        true_fn = b.fresh("br")
        b.emit(ir.Def(true_fn, (ir.Param(a),), body))
        b.tag("cond-unbacked-nested")
        return ir.call(COND, pred, ir.Name(true_fn), ir.Lambda((a,), ir.BinOp(pa, "*", ir.Const(2))),
                       ir.TupleExpr((ir.Name(op.name),)))
    uses: list[tuple[ir.Expr, bool]] = []
    for _ in range(2):
        u = b.fresh("u")
        b.emit(ir.Assign(ir.Name(u), _count(ir.Name(data), choose(draw, CUTS))))
        if boolean(draw):  # closed over through a tensor sized by the count
            r = b.fresh("n")
            b.emit(ir.Assign(ir.Name(r), ir.method(ir.Name(data), "new_ones", ir.Name(u))))
            uses.append((ir.method(ir.Name(r), "sum"), False))
            b.tag("cond-unbacked-sized-capture")
        else:
            uses.append((ir.Name(u), True))
    branches = [ir.Lambda((a,), _use(draw, u, pa, is_int)) for u, is_int in uses]
    b.tag("cond-unbacked-closure")
    return ir.call(COND, pred, branches[0], branches[1], ir.TupleExpr((ir.Name(op.name),)))


def _sized_by_values(draw, b: Builder, pred: ir.Expr, data: str) -> ir.Expr:
    """A cond whose branches return tensors whose lengths are their own data-dependent counts."""
    b.dynamo_config["capture_dynamic_output_shape_ops"] = True
    a = b.fresh("a")
    pa = ir.Name(a)
    forms = []
    for cut in (choose(draw, CUTS), choose(draw, CUTS)):
        how = choose(draw, ("masked-select", "mask", "ones"))
        if how == "masked-select":
            forms.append(ir.BinOp(ir.method(pa, "masked_select", ir.BinOp(pa, ">", ir.Const(cut))), "*", ir.Const(2)))
        elif how == "mask":
            forms.append(ir.BinOp(ir.Sub(pa, ir.BinOp(pa, "<", ir.Const(cut))), "+", ir.Const(1)))
        else:
            forms.append(ir.method(pa, "new_ones", _count(pa, cut)))
        b.tag(f"cond-unbacked-out-{how}")
    return ir.call(COND, pred, ir.Lambda((a,), forms[0]), ir.Lambda((a,), forms[1]), ir.TupleExpr((ir.Name(data),)))


@fragment("conds", CONSTRUCT, weight=1, nestable=False)
def cond_unbacked_branches(draw, b: Builder) -> None:
    """A cond closing over unbacked counts, or returning tensors sized by their own values."""
    _start(b)
    b.dynamo_config["capture_scalar_outputs"] = True
    if boolean(draw) and "unbacked-py-branch" not in b.tags:
        b.compile_options["fullgraph"] = True
        b.tag("fullgraph")
    data = _data_input(b)
    pred = _flipping_input(draw, b)
    r = b.fresh("r")
    if boolean(draw):
        op = choose(draw, [t for t in b.scope.visible_tensors() if not t.requires_grad] or b.scope.visible_tensors())
        operand = b.fresh("o")
        b.bind(operand, ir.method(ir.call("torch.tanh", op.expr), "detach"), op.shape, 1.0)
        b.bind(r, _closing_over(draw, b, data, b.scope.tensors[-1], pred), op.shape, 2.0 + DATA_LEN)
        return
    b.emit(ir.Assign(ir.Name(r), _sized_by_values(draw, b, pred, data)))
    n = b.fresh("k")
    b.emit(ir.Assign(ir.Name(n), ir.Sub(ir.Attr(ir.Name(r), "shape"), ir.Const(0))))
    b.returns += [ir.Name(r), ir.Name(n)]
    b.tag("cond-unbacked-sized-output")
