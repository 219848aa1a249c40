"""Unbacked sizes (issue 14, construct 8): `.item()`, `nonzero()` and `unique()` traced into unbacked
symbols, which then flow into a Python branch, `torch._check`, the shapes of later ops, a cond
predicate and a cond branch body.

Dynamo traces these only when `capture_scalar_outputs` (and, for data-dependent output shapes,
`capture_dynamic_output_shape_ops`) is on, so the program carries them in its `DYNAMO_CONFIG`: the
compiled calls run under them, eager does not. A private data input changes between calls, so the
unbacked values (and every branch that reads them) go each way across the call plan.
"""
from __future__ import annotations

from .. import ir, tensor_ops
from ..builder import Builder, TensorVar
from ..choose import choose, integer
from ..fragments import fragment
from .nested import COND, _start, chance

CONSTRUCT = "unbacked-config"
DATA_LEN = 5
DATA_OFFSETS = (0.0, 0.8, -0.8)  # per call: the count of positives goes 2, 4, 1 (with threshold 0)
SOURCES = ("item", "nonzero", "unique")
USES = ("py-branch", "check-shape", "cond-pred", "branch-body")


def _data_input(b: Builder) -> str:
    """A 1-D input only this construct reads, whose values (not shape) change on every call."""
    name = b.fresh("d")
    b.add_input(name, (DATA_LEN,))
    b.root.tensors.pop()  # private: other fragments must not mutate or resize it
    param = b.params[-1]
    for call, off in enumerate(DATA_OFFSETS[1:], start=1):
        param.per_call[call] = ir.call("torch.linspace", ir.Const(round(-1.0 + off, 3)), ir.Const(round(1.0 + off, 3)),
                                       ir.Const(DATA_LEN), device=ir.Name("device"))
    b.calls = max(b.calls, len(DATA_OFFSETS))
    return name


def _source(draw, b: Builder, data: str) -> tuple[ir.Expr, str]:
    """An expression giving an unbacked int in [0, DATA_LEN], and the source's tag."""
    kind = choose(draw, SOURCES)
    cut = ir.Const(choose(draw, (0.0, 0.25, -0.5)))
    if kind == "item":
        return ir.method(ir.method(ir.BinOp(ir.Name(data), ">", cut), "sum"), "item"), kind
    b.dynamo_config["capture_dynamic_output_shape_ops"] = True
    if kind == "nonzero":
        return ir.Sub(ir.Attr(ir.call("torch.nonzero", ir.BinOp(ir.Name(data), ">", cut)), "shape"), ir.Const(0)), kind
    rounded = ir.call("torch.round", ir.BinOp(ir.Name(data), "*", ir.Const(2)))
    return ir.method(ir.call("torch.unique", rounded), "numel"), kind


def _use(draw, b: Builder, kind: str, u: str, cut: int) -> None:
    """Feed the unbacked int `u` into one place where Dynamo must keep it symbolic."""
    src = tensor_ops.pick(draw, b)
    operand, bound = tensor_ops.squash(src)
    r = b.fresh("t")
    un = ir.Name(u)
    if kind == "py-branch":
        # Data-dependent control flow: Dynamo must break the graph here, never pick a side.
        b.emit(ir.If(ir.BinOp(un, ">", ir.Const(cut)), (ir.Assign(ir.Name(r), ir.BinOp(operand, "*", ir.Const(2))),),
                     (ir.Assign(ir.Name(r), ir.BinOp(operand, "-", ir.Const(1))),)))
        b.scope.tensors.append(TensorVar(r, src.shape, bound * 2 + 1))
    elif kind == "check-shape":
        b.emit(ir.ExprStmt(ir.call("torch._check", ir.BinOp(un, ">=", ir.Const(0)))),
               ir.ExprStmt(ir.call("torch._check", ir.BinOp(un, "<=", ir.Const(DATA_LEN)))))
        ones = ir.method(src.expr, "new_ones", un)
        b.bind(r, ir.BinOp(operand, "+", ir.method(ones, "sum")), src.shape, bound + DATA_LEN)
    else:
        _start(b)
        a = b.fresh("a")
        body = ir.BinOp(ir.call("torch.sin", ir.Name(a)), "+", un) if kind == "branch-body" \
            else ir.call("torch.sin", ir.Name(a))
        other = ir.BinOp(ir.call("torch.cos", ir.Name(a)), "-", ir.Const(1))
        pred = ir.BinOp(un, ">", ir.Const(cut)) if kind == "cond-pred" else \
            ir.BinOp(ir.method(ir.call("torch.tanh", src.expr), "mean"), ">", ir.Const(0.0))
        b.bind(r, ir.call(COND, pred, ir.Lambda((a,), body), ir.Lambda((a,), other), ir.TupleExpr((operand,))),
               src.shape, 1.0 + DATA_LEN)
        b.tag("cond")
    b.tag(f"unbacked-{kind}")


@fragment("conds", CONSTRUCT, weight=2, nestable=False)
def unbacked_sizes(draw, b):
    """An unbacked int from `.item()`/`nonzero()`/`unique()`, compiled with capture_scalar_outputs, used once
    or twice: in a Python branch, `torch._check` plus a shape, a cond predicate, a cond branch body."""
    b.dynamo_config["capture_scalar_outputs"] = True
    data = _data_input(b)
    value, kind = _source(draw, b, data)
    u = b.fresh("u")
    b.emit(ir.Assign(ir.Name(u), value))
    b.returns.append(ir.Name(u))
    b.tag(f"unbacked-{kind}")
    cut = integer(draw, 1, 3)
    for _ in range(1 + chance(draw, 3)):
        kind = choose(draw, USES)
        if kind == "py-branch" and b.compile_options.get("fullgraph"):
            kind = "check-shape"  # a graph break by design: under fullgraph, a refusal rather than a test
        _use(draw, b, kind, u, cut)
