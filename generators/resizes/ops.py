"""The operations the `resizes` family applies to a target, as tables: metadata ops (`t_`, `resize_`,
`set_`...), in-place data ops, and `out=` ops, plus reading the mutated metadata back in Python.

Every entry takes an `OpSite` (the target, the path that reaches it, the tensors the op may read) and
returns an `OpResult`: the statements, the target's new shape and bound, and its new layout. Shapes are
tracked through every op, and a tensor whose memory a resize grows is written in full before it is read,
so programs stay deterministic.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from math import prod

from hypothesis import strategies as st

from .. import ir, tensor_ops
from ..builder import Builder, TensorVar, linspace
from ..choose import boolean, choose, integer
from .targets import Target, fresh_expr

RESIZE_SHAPES = ((2, 2), (5,), (3, 5), (0,), (1, 3), (2, 3, 2), (6,))
READS = ("shape", "size", "stride", "dim", "len", "contiguous", "iter")
OUT_UNARY = ("torch.sin", "torch.cos", "torch.tanh", "torch.sigmoid", "torch.abs", "torch.neg")
OUT_REDUCE = ("torch.sum", "torch.mean", "torch.amax", "torch.cumsum")


@dataclass
class OpResult:
    stmts: list[ir.Stmt]
    shape: tuple[int, ...]
    bound: float
    tags: tuple[str, ...]
    noncontig: bool | None = None  # None: unchanged
    post_layout: ir.Expr | None = None  # how an input would look after the op, for a later call


@dataclass
class OpSite:
    """Where an op is drawn: the target, the expression reaching it, and what the op may read."""

    target: Target
    path: ir.Expr
    pool: list[TensorVar]
    like: ir.Expr
    input_names: tuple[str, ...] = ()
    noncontig: bool = False
    grad: bool = False  # the program has a grad leaf: any tensor may require grad, and out= ops refuse those

    @property
    def shape(self) -> tuple[int, ...]:
        return self.target.var.shape

    def call(self, meth: str, *args: ir.Expr) -> ir.Stmt:
        return ir.ExprStmt(ir.method(self.path, meth, *args))


def _consts(xs) -> tuple[ir.Const, ...]:
    return tuple(ir.Const(v) for v in xs)


def broadcasts(src: tuple[int, ...], dst: tuple[int, ...]) -> bool:
    return len(src) <= len(dst) and dst[len(dst) - len(src):] == src


def writes_all(draw, path: ir.Expr, shape: tuple[int, ...], pool: list[TensorVar]) -> tuple[list[ir.Stmt], float, str]:
    """A data write covering every element (after a growing resize the new memory is uninitialised)."""
    kind = choose(draw, ("fill_", "zero_", "copy_"))
    if kind == "zero_":
        return [ir.ExprStmt(ir.method(path, "zero_"))], 1.0, kind
    if kind == "copy_":
        srcs = [v for v in pool if broadcasts(v.shape, shape)]
        if srcs:
            expr, _, bound = tensor_ops.unary(draw, choose(draw, srcs))
            return [ir.ExprStmt(ir.method(path, "copy_", expr))], bound, kind
    value = choose(draw, (0.5, -1.0, 2.0))
    return [ir.ExprStmt(ir.method(path, "fill_", ir.Const(value)))], 2.0, "fill_"


# ---- metadata ops ------------------------------------------------------------------


def _t(draw, site: OpSite) -> OpResult:
    s = site.shape
    post = ir.method(linspace(s), "t") if len(s) == 2 and s[0] == s[1] else None
    return OpResult([site.call("t_")], tuple(reversed(s)), site.target.var.bound, ("t_",),
                    None if len(s) < 2 else True, post)


def _transpose(op: str):
    def draw_op(draw, site: OpSite) -> OpResult:
        s, persistent = site.shape, site.target.persistent
        pairs = [(i, j) for i in range(len(s)) for j in range(i + 1, len(s)) if not persistent or s[i] == s[j]]
        i, j = choose(draw, pairs)
        new = list(s)
        new[i], new[j] = s[j], s[i]
        post = ir.method(linspace(s), "transpose", ir.Const(i), ir.Const(j)) if s[i] == s[j] else None
        return OpResult([site.call(op, ir.Const(i), ir.Const(j))], tuple(new), site.target.var.bound, (op,), True,
                        post)

    return draw_op


def _squeeze(draw, site: OpSite) -> OpResult:
    s, bound = site.shape, site.target.var.bound
    ones = [d for d, n in enumerate(s) if n == 1]
    if ones and not site.target.persistent and boolean(draw):
        d = choose(draw, ones)
        return OpResult([site.call("squeeze_", ir.Const(d))], s[:d] + s[d + 1:], bound, ("squeeze_",))
    new = tuple(n for n in s if n != 1)
    return OpResult([site.call("squeeze_")], new, bound, ("squeeze_",), None, linspace(new))


def _unsqueeze(draw, site: OpSite) -> OpResult:
    s = site.shape
    d = integer(draw, 0, len(s))
    return OpResult([site.call("unsqueeze_", ir.Const(d))], s[:d] + (1,) + s[d:], site.target.var.bound,
                    ("unsqueeze_",))


def _resize(op: str):
    def draw_op(draw, site: OpSite) -> OpResult:
        s, bound, name = site.shape, site.target.var.bound, site.target.var.name
        others = [v for v in site.pool if v.shape != s and v.name != name] if op == "resize_as_" else []
        used = op
        if others:
            other = choose(draw, others)
            new, stmts = other.shape, [site.call(op, other.expr)]
        else:
            new = choose(draw, [r for r in RESIZE_SHAPES if r != s])
            stmts, used = [site.call("resize_", *_consts(new))], "resize_"
        tags: tuple[str, ...] = (used,)
        # A view (or a strided tensor) may need storage past its old elements even when it shrinks: the
        # bytes a resize adds are uninitialised and differ between any two runs, so write them all.
        if prod(new) > prod(s) or (prod(new) and (site.target.base is not None or site.noncontig)):
            readable = [v for v in site.pool if v.name not in site.target.shares_storage]
            writes, bound, kind = writes_all(draw, site.path, new, readable)
            stmts += writes
            tags += (kind,)
        return OpResult(stmts, new, bound, tags, False, linspace(new))

    return draw_op


def _as_strided(draw, site: OpSite) -> OpResult:
    s = site.shape
    n = prod(s)
    layouts = [((n,), (1,)), (((n + 1) // 2,), (2,))]
    if len(s) == 2:
        layouts.append(((s[1], s[0]), (1, s[1])))
    size, stride = choose(draw, layouts)
    post = ir.method(linspace((n,)), "as_strided", ir.TupleExpr(_consts(size)), ir.TupleExpr(_consts(stride)))
    return OpResult([site.call("as_strided_", ir.TupleExpr(_consts(size)), ir.TupleExpr(_consts(stride)))], size,
                    site.target.var.bound, ("as_strided_",), stride != (1,), post)


def _set(draw, site: OpSite) -> OpResult:
    """`set_`: share a fresh tensor's storage, an input's storage, or nothing at all."""
    bound = site.target.var.bound
    inputs = [v for v in site.pool if v.name in site.input_names]
    src_kind = choose(draw, ("fresh", "empty") + (("input",) if inputs else ()))
    if src_kind == "empty":
        return OpResult([site.call("set_")], (0,), bound, ("set_",), False, linspace((0,)))
    if src_kind == "input":
        src = choose(draw, inputs)
        return OpResult([site.call("set_", src.expr)], src.shape, src.bound, ("set_",), None)
    new = choose(draw, ((2, 3), (4,), (3, 3)))
    return OpResult([site.call("set_", fresh_expr(new, site.like))], new, 1.0, ("set_",), False, linspace(new))


def _square_pair(s: tuple[int, ...]) -> bool:
    return any(s[i] == s[j] for i in range(len(s)) for j in range(i + 1, len(s)))


Allowed = Callable[[tuple[int, ...], bool], bool]  # (shape, persistent) -> may the op be drawn
META_OPS: dict[str, tuple[Allowed, Callable[..., OpResult]]] = {
    "t_": (lambda s, p: len(s) <= 2 and (not p or len(s) < 2 or s[0] == s[1]), _t),
    "transpose_": (lambda s, p: len(s) >= 2 and (not p or _square_pair(s)), _transpose("transpose_")),
    "swapdims_": (lambda s, p: len(s) >= 2 and (not p or _square_pair(s)), _transpose("swapdims_")),
    "squeeze_": (lambda s, p: True, _squeeze),
    "unsqueeze_": (lambda s, p: not p, _unsqueeze),
    "resize_": (lambda s, p: True, _resize("resize_")),
    "resize_as_": (lambda s, p: True, _resize("resize_as_")),
    "as_strided_": (lambda s, p: prod(s) >= 2, _as_strided),
    "set_": (lambda s, p: True, _set),
}


def meta_op(draw, site: OpSite) -> OpResult:
    ops = [o for o, (allowed, _) in META_OPS.items() if allowed(site.shape, site.target.persistent)]
    if "transpose_" in ops:  # it needs two dims, so it is allowed less often than the others: weigh it twice
        ops.append("transpose_")
    return META_OPS[choose(draw, ops)][1](draw, site)


# ---- data ops ----------------------------------------------------------------------


def _index_assign(draw, site: OpSite) -> OpResult:
    index: ir.Expr = ir.Const(0) if boolean(draw) else ir.TupleExpr((ir.Const(...), ir.Const(-1)))
    value = choose(draw, (1.5, -0.5))
    return OpResult([ir.Assign(ir.Sub(site.path, index), ir.Const(value))], site.shape,
                    max(site.target.var.bound, 1.5), ("index-assign",))


def _add_or_copy(op: str):
    def draw_op(draw, site: OpSite) -> OpResult:
        s, bound = site.shape, site.target.var.bound
        srcs = [v for v in site.pool if broadcasts(v.shape, s)]
        if srcs and boolean(draw):
            expr, _, b2 = tensor_ops.unary(draw, choose(draw, srcs))
            return OpResult([site.call(op, expr)], s, b2 if op == "copy_" else bound + b2, (op,))
        if op == "copy_":
            return OpResult([site.call(op, ir.call("torch.ones_like", site.path))], s, max(bound, 1.0), (op,))
        c = choose(draw, (1, -0.5))
        return OpResult([site.call(op, ir.Const(c))], s, bound + 1, (op,))

    return draw_op


def _mul(draw, site: OpSite) -> OpResult:
    return OpResult([site.call("mul_", ir.Const(choose(draw, (0.5, -1.0))))], site.shape, site.target.var.bound,
                    ("mul_",))


DATA_OPS: dict[str, tuple[Allowed, Callable[..., OpResult]]] = {
    "add_": (lambda s, p: not p, _add_or_copy("add_")),
    "mul_": (lambda s, p: True, _mul),
    "fill_": (lambda s, p: True, lambda draw, site: OpResult(
        [site.call("fill_", ir.Const(0.25))], site.shape, max(site.target.var.bound, 0.25), ("fill_",))),
    "zero_": (lambda s, p: True, lambda draw, site: OpResult(
        [site.call("zero_")], site.shape, site.target.var.bound, ("zero_",))),
    "copy_": (lambda s, p: True, _add_or_copy("copy_")),
    "index-assign": (lambda s, p: bool(s) and s[0] >= 1 and prod(s) > 0, _index_assign),
}


def data_op(draw, site: OpSite) -> OpResult:
    """One in-place data op; the target's shape is unchanged, its bound may grow a little."""
    ops = [o for o, (allowed, _) in DATA_OPS.items() if allowed(site.shape, site.target.persistent)]
    return DATA_OPS[choose(draw, ops)][1](draw, site)


# ---- out= ops ----------------------------------------------------------------------


def out_call(fn: str, args: tuple[ir.Expr, ...], out: ir.Expr) -> ir.Stmt:
    return ir.ExprStmt(ir.Call(ir.dotted(fn), args, (("out", out),)))


def out_op(draw, site: OpSite) -> OpResult:
    """`torch.<op>(src, ..., out=path)`: same shape, resized, into an empty or a non-contiguous out."""
    target, s = site.target, site.shape
    variant = "out-empty" if prod(s) == 0 else "out-noncontig" if site.noncontig \
        else choose(draw, ("out-same", "out-resize"))
    safe_src = target.kind in ("intermediate", "global", "closure")

    def operand(v: TensorVar) -> tuple[ir.Expr, float]:
        expr, bound = tensor_ops.squash(v)
        expr = ir.method(expr, "detach") if site.grad else expr
        return (expr, bound) if safe_src else (ir.BinOp(expr, "*", ir.Const(0.5)), bound * 0.5)

    def result(stmt: ir.Stmt, src: TensorVar, shape: tuple[int, ...], bound: float, how: str) -> OpResult:
        tag = variant if variant in ("out-empty", "out-noncontig") else "out-same" if shape == s else "out-resize"
        # A later call may start from the result's layout only when the op does not read the target itself.
        post = linspace(shape) if src.name != target.var.name or shape == s else None
        return OpResult([stmt], shape, bound, (tag, how), False if shape != s else None, post)

    base = {target.base.name} if target.base is not None else set()
    same = [v for v in site.pool if v.shape == s and v.name not in base]
    # A resizing op must not read the memory it resizes (the target, its aliases, the input it is a view of).
    pool = [v for v in site.pool if v.name not in target.shares_storage]
    other = [v for v in pool if v.shape != s and v.shape]
    want_same = variant == "out-same" or (variant == "out-noncontig" and same and boolean(draw))
    if want_same and same:
        src = choose(draw, same)
        fn = choose(draw, OUT_UNARY)
        expr, bound = operand(src)
        return result(out_call(fn, (expr,), site.path), src, s, bound if fn in ("torch.abs", "torch.neg") else 1.0,
                      "out-pointwise")
    src = choose(draw, other) if other else None
    if src is None or boolean(draw):
        src = src or choose(draw, [v for v in pool if v.shape] or pool or same)
        if src.shape:
            dim = integer(draw, 0, len(src.shape) - 1)
            # amax has no identity and mean of nothing is NaN: over an empty tensor only sum and cumsum.
            fn = choose(draw, OUT_REDUCE if prod(src.shape) else ("torch.sum", "torch.cumsum"))
            expr, bound = operand(src)
            shape = src.shape if fn == "torch.cumsum" else src.shape[:dim] + src.shape[dim + 1:]
            if fn in ("torch.sum", "torch.cumsum"):
                bound *= max(src.shape[dim], 1)
            if src.name in target.shares_storage and shape != s:
                fn, shape, bound = "torch.sin", src.shape, 1.0  # only reachable when nothing else is visible
                return result(out_call(fn, (expr,), site.path), src, shape, bound, "out-pointwise")
            return result(out_call(fn, (expr, ir.Const(dim)), site.path), src, shape, bound, "out-reduction")
    fn = choose(draw, OUT_UNARY)
    expr, bound = operand(src)
    return result(out_call(fn, (expr,), site.path), src, src.shape, bound if fn in ("torch.abs", "torch.neg") else 1.0,
                  "out-pointwise")


# ---- reading metadata back ---------------------------------------------------------

ReadFn = Callable[[ir.Expr, tuple[int, ...], int | None], tuple[ir.Expr, float]]
READ_EXPRS: dict[str, ReadFn] = {  # (tensor, shape, dim) -> (Python number read from it, bound)
    "shape": lambda x, s, d: ((ir.Sub(ir.Attr(x, "shape"), ir.Const(d)) if s else ir.call("len", ir.Attr(x, "shape"))),
                              8),
    "size": lambda x, s, d: ((ir.method(x, "size", ir.Const(d)) if s else ir.call("len", ir.method(x, "size"))), 8),
    "stride": lambda x, s, d: ((ir.Sub(ir.method(x, "stride"), ir.Const(d)) if s
                                else ir.call("len", ir.method(x, "stride"))), 16),
    "dim": lambda x, s, d: (ir.method(x, "dim"), 4),
    "len": lambda x, s, d: (ir.call("len", x), 8),
    "contiguous": lambda x, s, d: (ir.IfExp(ir.method(x, "is_contiguous"), ir.Const(1), ir.Const(2)), 2),
}


def _read_iter(b: Builder, var: TensorVar, k: str) -> None:
    b.emit(ir.Assign(ir.Name(k), ir.Const(0)))
    row = b.fresh("row")
    b.emit(ir.For(ir.Name(row), var.expr, (ir.Assign(ir.Name(k), ir.BinOp(
        ir.Name(k), "+", ir.method(ir.call("torch.tanh", ir.Name(row)), "sum"))),)))
    b.returns.append(ir.Name(k))
    b.tag("read-iter")


def read_back(draw, b: Builder, var: TensorVar) -> None:
    """Read the mutated tensor's metadata in Python and use the numbers in computation and outputs."""
    s = var.shape
    kinds = [k for k in READS if s or k in ("shape", "size", "stride", "dim", "contiguous")]
    for kind in draw(st.lists(st.sampled_from(kinds), min_size=1, max_size=2, unique=True)):
        k = b.fresh("k")
        d = integer(draw, 0, len(s) - 1) if s else None
        if kind == "iter":
            if s[0] <= 4:
                _read_iter(b, var, k)
            continue
        value, factor = READ_EXPRS[kind](var.expr, s, d)
        b.emit(ir.Assign(ir.Name(k), value))
        b.returns.append(ir.Name(k))
        used = tensor_ops.pick(draw, b)
        operand, bound = tensor_ops.squash(used)
        b.bind(b.fresh("u"), ir.BinOp(operand, "*", ir.Name(k)), used.shape, bound * factor)
        b.tag(f"read-{kind}")
