"""`out=` aliases (issue 14, construct 7): write a tensor through one name, read it through another path.

A fresh tensor is reachable by its name and by one or two other paths made before the write: a list
element, a dict value, an object attribute, a view. An `out=` op then writes it through one of these
(resizing it when the result's shape differs), and the program reads it back through a different one:
`.numel()`, `.shape`, `.stride()`, its values. A compiler that updates what it knows about the tensor
only for the path the write went through returns stale metadata on the others.
"""
from __future__ import annotations

from math import prod

from .. import ir, tensor_ops
from ..builder import Builder, TensorVar
from ..choose import choose, integer
from ..fragments import fragment
from .targets import box_class, fresh_expr, like, state

CONSTRUCT = "out-alias"
SHAPES = ((2, 3), (4,), (3, 4), (2, 2))
HOLDERS = ("list", "dict", "attr")
READS = ("numel", "shape", "stride", "values")


def _holder(b: Builder, kind: str, y: ir.Name) -> ir.Expr:
    """Put `y` in a container or an object made before the write; returns the path reaching it."""
    h = b.fresh({"list": "L", "dict": "D", "attr": "o"}[kind])
    if kind == "list":
        b.emit(ir.Assign(ir.Name(h), ir.ListExpr((y,))))
        return ir.Sub(ir.Name(h), ir.Const(0))
    if kind == "dict":
        b.emit(ir.Assign(ir.Name(h), ir.DictExpr(((ir.Const("o"), y),))))
        return ir.Sub(ir.Name(h), ir.Const("o"))
    st = state(b)
    if not st.box:
        b.add_helper(box_class())
        st.box = True
    b.emit(ir.Assign(ir.Name(h), ir.call(ir.Name("Box"), y)))
    return ir.Attr(ir.Name(h), "t")


def _write(draw, b: Builder, path: ir.Expr, src: TensorVar) -> tuple[tuple[int, ...], float, str]:
    """`torch.<op>(src, out=path)`: the tensor's new shape and bound, and the op's tag."""
    operand, bound = tensor_ops.squash(src)
    if any(p.tensor is not None and p.tensor.requires_grad for p in b.params):
        operand = ir.method(operand, "detach")  # out= refuses an operand that requires grad
    if src.shape and prod(src.shape) and integer(draw, 0, 2) == 0:
        dim = integer(draw, 0, len(src.shape) - 1)
        b.emit(ir.ExprStmt(ir.Call(ir.dotted("torch.sum"), (operand, ir.Const(dim)), (("out", path),))))
        return src.shape[:dim] + src.shape[dim + 1:], bound * src.shape[dim], "out-alias-reduction"
    fn = choose(draw, ("torch.sin", "torch.tanh", "torch.sigmoid"))
    b.emit(ir.ExprStmt(ir.Call(ir.dotted(fn), (operand,), (("out", path),))))
    return src.shape, 1.0, "out-alias-pointwise"


def _read(draw, b: Builder, kind: str, path: ir.Expr, shape: tuple[int, ...], bound: float) -> None:
    k = b.fresh("k")
    if kind == "values":
        b.bind(k, ir.BinOp(path, "*", ir.Const(2)), shape, bound * 2)
        return
    if kind == "numel":
        value: ir.Expr = ir.method(path, "numel")
    elif kind == "shape":
        value = ir.Sub(ir.Attr(path, "shape"), ir.Const(integer(draw, 0, len(shape) - 1))) if shape \
            else ir.call("len", ir.Attr(path, "shape"))
    else:
        value = ir.Sub(ir.method(path, "stride"), ir.Const(0)) if shape else ir.call("len", ir.method(path, "stride"))
    b.emit(ir.Assign(ir.Name(k), value))
    b.returns.append(ir.Name(k))
    used = tensor_ops.pick(draw, b)
    operand, ub = tensor_ops.squash(used)
    b.bind(b.fresh("u"), ir.BinOp(operand, "*", ir.Name(k)), used.shape, ub * 16)


@fragment("resizes", CONSTRUCT, weight=2, nestable=False)
def out_alias(draw, b):
    """A fresh tensor written by `out=` through one path and read back through another."""
    src = tensor_ops.pick(draw, b)
    start = choose(draw, SHAPES)
    y = ir.Name(b.fresh("y"))
    b.emit(ir.Assign(y, fresh_expr(start, like(b))))
    paths: list[tuple[str, ir.Expr]] = [("name", y)]
    for _ in range(1 + integer(draw, 0, 1)):
        kind = choose(draw, HOLDERS)
        paths.append((kind, _holder(b, kind, y)))
    view = None
    if integer(draw, 0, 2) == 0:
        view = ir.Name(b.fresh("v"))
        b.emit(ir.Assign(view, ir.method(y, "view", ir.Const(-1))))  # taken before the write: keeps its shape
    writer = integer(draw, 0, len(paths) - 1)
    shape, bound, how = _write(draw, b, paths[writer][1], src)
    b.tag(f"out-alias-write-{paths[writer][0]}", how, "out-alias-resize" if shape != start else "out-alias-same")
    others = [p for i, p in enumerate(paths) if i != writer]
    reader_kind, reader = choose(draw, others)
    read = choose(draw, READS)
    _read(draw, b, read, reader, shape, bound)
    b.tag(f"out-alias-read-{reader_kind}", f"out-alias-read-{read}")
    if view is not None:
        # Before the write the view covered the whole tensor; a grown tensor's storage is reallocated with
        # the old bytes copied, so every element the view reads was written by someone.
        b.bind(b.fresh("t"), ir.BinOp(view, "+", ir.Const(1)), (prod(start),), max(bound, 1.0) + 1)
        b.tag("out-alias-read-view")
    b.returns.append(y)
