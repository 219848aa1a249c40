"""The `resizes` family: in-place resizes and tensor metadata mutation (seeds 000 and 004).

Each fragment picks a target tensor (a graph input, an intermediate, a view of
an input, an aliased argument, a module global, or a tensor held in the
closure of a pre-existing function), reaches it through a path (directly, a
nested function's cell, a list, a dict, an object attribute), mutates it
(`out=` ops, metadata ops such as `t_`/`resize_`/`set_`, or data ops), then
reads its metadata in Python and feeds the numbers into later computation and
the outputs. Shapes are tracked through every op, and a tensor grown by
`resize_` is always written before it is read, so programs stay deterministic.

Targets that persist across calls (globals, closure cells) only get ops whose
resulting shape does not depend on the layout they start from, so every call
of the plan sees the same shapes; a fresh input may be re-laid-out to the
post-mutation layout for a later call (the guard scenario of seed 004).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from math import prod
from weakref import WeakKeyDictionary

from hypothesis import strategies as st

from . import ir, tensor_ops
from .builder import Builder, InputParam, TensorVar, linspace
from .choose import boolean, choose, integer
from .fragments import fragment

TARGET_KINDS = ("input", "intermediate", "view", "aliased", "global", "closure")
ACCESS_KINDS = ("direct", "cell", "list", "dict", "attr")
META_OPS = ("t_", "transpose_", "swapdims_", "squeeze_", "unsqueeze_", "resize_", "resize_as_", "as_strided_",
            "set_")
DATA_OPS = ("add_", "mul_", "fill_", "zero_", "copy_", "index-assign")
OUT_VARIANTS = ("out-same", "out-resize", "out-empty", "out-noncontig")
RESIZE_SHAPES = ((2, 2), (5,), (3, 5), (0,), (1, 3), (2, 3, 2), (6,))
READS = ("shape", "size", "stride", "dim", "len", "contiguous", "iter")
OUT_UNARY = ("torch.sin", "torch.cos", "torch.tanh", "torch.sigmoid", "torch.abs", "torch.neg")
OUT_REDUCE = ("torch.sum", "torch.mean", "torch.amax", "torch.cumsum")


@dataclass
class _State:
    """Per-program facts the builder does not track: layouts and object identity."""

    noncontig: set[str] = field(default_factory=set)
    same_object: dict[str, set[str]] = field(default_factory=dict)
    aliased_params: set[str] = field(default_factory=set)
    box: bool = False


_STATES: WeakKeyDictionary[Builder, _State] = WeakKeyDictionary()


def _state(b: Builder) -> _State:
    return _STATES.setdefault(b, _State())


@dataclass
class Target:
    """The tensor a fragment mutates, and how its metadata relates to the rest of the program."""

    kind: str
    var: TensorVar
    persistent: bool = False
    param: InputParam | None = None  # an input that a later call may re-lay-out
    base: TensorVar | None = None  # the input a view writes through to
    alias_names: tuple[str, ...] = ()  # other names bound to the same tensor object
    noncontig: bool = False


@dataclass
class OpResult:
    stmts: list[ir.Stmt]
    shape: tuple[int, ...]
    bound: float
    tags: tuple[str, ...]
    noncontig: bool | None = None  # None: unchanged
    post_layout: ir.Expr | None = None  # how an input would look after the op, for a later call


def _fresh_expr(shape: tuple[int, ...], like: ir.Expr | None) -> ir.Expr:
    """A deterministic tensor of `shape`, on `like`'s device (module level when `like` is None)."""
    n = prod(shape)
    device = {"device": ir.Attr(like, "device")} if like is not None else {}
    if n == 0:
        base: ir.Expr = ir.call("torch.zeros", *(ir.Const(s) for s in shape), **device)
        return base
    base = ir.call("torch.linspace", ir.Const(-1.0), ir.Const(1.0), ir.Const(n), **device)
    return base if len(shape) == 1 else ir.method(base, "reshape", *(ir.Const(s) for s in shape))


def _noncontig_expr(shape: tuple[int, ...], like: ir.Expr | None) -> ir.Expr:
    return ir.method(_fresh_expr((shape[1], shape[0]), like), "t")


def _like(b: Builder) -> ir.Expr:
    """A tensor input whose `.device` tensors created inside the entry follow."""
    return next(ir.Name(p.name) for p in b.params if p.tensor is not None)


# ---- targets -------------------------------------------------------------------


def _inputs(b: Builder) -> list[TensorVar]:
    return [p.tensor for p in b.params if p.tensor is not None and not p.tensor.requires_grad
            and p.name not in _state(b).aliased_params]


def _want_shape(draw, want: str | None) -> tuple[int, ...]:
    if want == "empty":
        return choose(draw, ((0,), (0, 3), (2, 0)))
    if want == "noncontig":
        return choose(draw, ((3, 4), (2, 3), (4, 2)))
    return choose(draw, ((4, 4), (3, 4), (3, 3), (4,), (1, 4), (2, 3)))


def make_target(draw, b: Builder, kind: str, want: str | None) -> Target:
    """Create or choose the tensor to mutate; `want` asks for an empty or a non-contiguous one."""
    state = _state(b)
    like = _like(b)
    if kind == "input":
        existing = _inputs(b)
        if want is None and existing:
            var = choose(draw, existing)
            param = _param(b, var.name)
            fresh = not b.root.stmts and not state.same_object.get(var.name) and not param.per_call
            return Target(kind, var, param=param if fresh else None,
                          alias_names=tuple(state.same_object.get(var.name, ())))
        shape = _want_shape(draw, want)
        name = b.fresh("p")
        make = _noncontig_expr(shape, None) if want == "noncontig" else _fresh_expr(shape, None)
        make = _on_device(make)
        var = TensorVar(name, shape, 1.0)
        param = InputParam(name, make, tensor=var)
        b.params.append(param)
        b.root.tensors.append(var)
        if want == "noncontig":
            state.noncontig.add(name)
        return Target(kind, var, param=param)
    if kind == "intermediate":
        name = b.fresh("w")
        if want is None:
            expr, shape, bound = tensor_ops.unary(draw, tensor_ops.pick(draw, b))
            var = b.bind(name, expr, shape, bound)
        else:
            shape = _want_shape(draw, want)
            expr = _noncontig_expr(shape, like) if want == "noncontig" else _fresh_expr(shape, like)
            var = b.bind(name, expr, shape, 1.0)
            if want == "noncontig":
                state.noncontig.add(name)
        return Target(kind, var)
    if kind in ("view", "aliased"):
        bases = [v for v in _inputs(b) if v.shape and (kind == "view" or not _param(b, v.name).per_call)]
        if not bases:
            return make_target(draw, b, "intermediate", want)
        base = choose(draw, bases)
        expr, shape, noncontig = _view_of(draw, b, base, want, same_allowed=kind == "aliased")
        if kind == "view":
            var = b.bind(b.fresh("v"), expr, shape, base.bound)
        else:
            name = b.fresh("a")
            var = TensorVar(name, shape, base.bound)
            b.params.append(InputParam(name, expr, tensor=var))
            b.root.tensors.append(var)
            state.aliased_params.add(name)
            state.aliased_params.add(base.name)
        if noncontig:
            state.noncontig.add(var.name)
        if expr == base.expr:
            state.same_object.setdefault(base.name, set()).add(var.name)
            state.same_object.setdefault(var.name, set()).add(base.name)
            return Target(kind, var, alias_names=(base.name,))
        return Target(kind, var, base=base)
    # Persistent targets: a module global, or the closure cell of a pre-existing function.
    shape = _want_shape(draw, want)
    init = _noncontig_expr(shape, None) if want == "noncontig" else _fresh_expr(shape, None)
    name = b.fresh("G").upper() if kind == "global" else "c"
    var = TensorVar(name, shape, 1.0)
    if kind == "global":
        b.add_global(name, init)
        b.root.tensors.append(var)
        if want == "noncontig":
            state.noncontig.add(name)
    return Target(kind, var, persistent=True, noncontig=want == "noncontig")


def _param(b: Builder, name: str) -> InputParam:
    return next(p for p in b.params if p.name == name)


def _on_device(expr: ir.Expr) -> ir.Expr:
    """Rewrite a module-level constructor so `inputs(device)` builds it on `device`."""
    if isinstance(expr, ir.Call) and expr.func in (ir.dotted("torch.linspace"), ir.dotted("torch.zeros")):
        return ir.Call(expr.func, expr.args, (("device", ir.Name("device")),))
    if isinstance(expr, ir.Call) and isinstance(expr.func, ir.Attr):
        return ir.Call(ir.Attr(_on_device(expr.func.value), expr.func.attr), expr.args, expr.kwargs)
    return expr


def _view_of(draw, b: Builder, base: TensorVar, want: str | None, same_allowed: bool):
    """(expr, shape, noncontiguous) of a view of `base` (or `base` itself for an aliased argument)."""
    x, s = base.expr, base.shape
    if want == "empty":
        return ir.Sub(x, ir.Slice(None, ir.Const(0))), (0, *s[1:]), False
    if want == "noncontig" and len(s) == 2:
        return ir.method(x, "t"), (s[1], s[0]), True
    if want == "noncontig" and s[0] >= 2:
        return ir.Sub(x, ir.Slice(None, None, ir.Const(2))), ((s[0] + 1) // 2, *s[1:]), True
    choices = ["same"] if same_allowed else []
    if s[0] > 1:
        choices.append("slice")
    if len(s) == 2:
        choices.append("t")
    if base.name not in _state(b).noncontig:
        choices.append("flat")
    if not choices:
        return x, s, base.name in _state(b).noncontig
    kind = choose(draw, choices)
    if kind == "same":
        return x, s, base.name in _state(b).noncontig
    if kind == "slice":
        return ir.Sub(x, ir.Slice(ir.Const(1), None)), (s[0] - 1, *s[1:]), base.name in _state(b).noncontig
    if kind == "t":
        return ir.method(x, "t"), (s[1], s[0]), base.name not in _state(b).noncontig
    return ir.method(x, "view", ir.Const(-1)), (prod(s),), False


# ---- access paths --------------------------------------------------------------


def _box_class() -> ir.ClassDef:
    init = ir.Def("__init__", (ir.Param("self"), ir.Param("t")),
                  (ir.Assign(ir.Attr(ir.Name("self"), "t"), ir.Name("t")),))
    return ir.ClassDef("Box", (), (init,))


def emit_through(draw, b: Builder, target: Target, make_op) -> OpResult:
    """Emit the op on the target, reaching it through a drawn access path; returns the op's result."""
    if target.kind == "closure":
        return _emit_closure(draw, b, target, make_op)
    if target.kind == "global":
        result = make_op(target.var.expr, [v for v in b.scope.visible_tensors() if v is not target.var])
        b.emit(*result.stmts)
        b.tag("target-global")
        return result
    access = choose(draw, ACCESS_KINDS)
    pool = b.scope.visible_tensors()
    name = target.var.expr
    if access == "cell":
        fn = b.fresh("g")
        result = make_op(name, pool)
        b.emit(ir.Def(fn, (), (*result.stmts, ir.Return(ir.Const(None)))))
        b.emit(ir.ExprStmt(ir.call(ir.Name(fn))))
        b.tag("target-cell")
        return result
    if access == "direct":
        result = make_op(name, pool)
        b.emit(*result.stmts)
        return result
    holder = b.fresh({"list": "L", "dict": "D", "attr": "o"}[access])
    if access == "list":
        b.emit(ir.Assign(ir.Name(holder), ir.ListExpr((name,))))
        path: ir.Expr = ir.Sub(ir.Name(holder), ir.Const(0))
    elif access == "dict":
        b.emit(ir.Assign(ir.Name(holder), ir.DictExpr(((ir.Const("t"), name),))))
        path = ir.Sub(ir.Name(holder), ir.Const("t"))
    else:
        state = _state(b)
        if not state.box:
            b.add_helper(_box_class())
            state.box = True
        b.emit(ir.Assign(ir.Name(holder), ir.call(ir.Name("Box"), name)))
        path = ir.Attr(ir.Name(holder), "t")
    result = make_op(path, pool)
    b.emit(*result.stmts)
    if boolean(draw):
        b.returns.append(ir.Name(holder))
    b.tag(f"target-{access}")
    return result


def _emit_closure(draw, b: Builder, target: Target, make_op) -> OpResult:
    """A module-level factory whose function mutates its closure cell `c`; the entry calls it."""
    src = tensor_ops.pick(draw, b)
    param = TensorVar("t", src.shape, src.bound)
    result = make_op(ir.Name("c"), [param])
    fn, factory = b.fresh("h"), b.fresh("make_h")
    inner = ir.Def(fn, (ir.Param("t"),), (*result.stmts, ir.Return(ir.Name("c"))))
    shape = target.var.shape
    init = _noncontig_expr(shape, None) if target.noncontig else _fresh_expr(shape, None)
    b.add_helper(ir.Def(factory, (), (ir.Assign(ir.Name("c"), init), inner, ir.Return(ir.Name(fn)))))
    handle = fn.upper()
    b.add_global(handle, ir.call(ir.Name(factory)))
    out = b.fresh("r")
    b.emit(ir.Assign(ir.Name(out), ir.call(ir.Name(handle), src.expr)))
    target.var.name = out
    b.root.tensors.append(target.var)
    b.tag("target-cell", "cell-closure")
    return result


# ---- operations ------------------------------------------------------------------


def _writes_all(draw, path: ir.Expr, shape: tuple[int, ...], pool: list[TensorVar]) -> tuple[list[ir.Stmt], float, str]:
    """A data write covering every element (after a growing resize the new memory is uninitialised)."""
    kind = choose(draw, ("fill_", "zero_", "copy_"))
    if kind == "zero_":
        return [ir.ExprStmt(ir.method(path, "zero_"))], 1.0, kind
    if kind == "copy_":
        srcs = [v for v in pool if _broadcasts(v.shape, shape)]
        if srcs:
            expr, _, bound = tensor_ops.unary(draw, choose(draw, srcs))
            return [ir.ExprStmt(ir.method(path, "copy_", expr))], bound, kind
    value = choose(draw, (0.5, -1.0, 2.0))
    return [ir.ExprStmt(ir.method(path, "fill_", ir.Const(value)))], 2.0, "fill_"


def _broadcasts(src: tuple[int, ...], dst: tuple[int, ...]) -> bool:
    return len(src) <= len(dst) and dst[len(dst) - len(src):] == src


def meta_op(draw, op: str, target: Target, path: ir.Expr, pool: list[TensorVar], like: ir.Expr,
            input_names: tuple[str, ...] = ()) -> OpResult:
    """One metadata op on `path` (a tensor of the target's tracked shape)."""
    s, bound = target.var.shape, target.var.bound
    call = lambda meth, *args: ir.ExprStmt(ir.method(path, meth, *args))  # noqa: E731
    consts = lambda xs: tuple(ir.Const(v) for v in xs)  # noqa: E731
    if op == "t_":
        new = tuple(reversed(s))
        post = ir.method(linspace(s), "t") if len(s) == 2 and s[0] == s[1] else None
        return OpResult([call("t_")], new, bound, (op,), None if len(s) < 2 else True, post)
    if op in ("transpose_", "swapdims_"):
        pairs = [(i, j) for i in range(len(s)) for j in range(i + 1, len(s)) if not target.persistent or s[i] == s[j]]
        i, j = choose(draw, pairs)
        new = list(s)
        new[i], new[j] = s[j], s[i]
        post = ir.method(linspace(s), "transpose", ir.Const(i), ir.Const(j)) if s[i] == s[j] else None
        return OpResult([call(op, ir.Const(i), ir.Const(j))], tuple(new), bound, (op,), True, post)
    if op == "squeeze_":
        ones = [d for d, n in enumerate(s) if n == 1]
        if ones and not target.persistent and boolean(draw):
            d = choose(draw, ones)
            return OpResult([call(op, ir.Const(d))], s[:d] + s[d + 1:], bound, (op,))
        new = tuple(n for n in s if n != 1)
        return OpResult([call(op)], new, bound, (op,), None, linspace(new))
    if op == "unsqueeze_":
        d = integer(draw, 0, len(s))
        return OpResult([call(op, ir.Const(d))], s[:d] + (1,) + s[d:], bound, (op,))
    if op in ("resize_", "resize_as_"):
        others = [v for v in pool if v.shape != s and v.name != target.var.name] if op == "resize_as_" else []
        if others:
            other = choose(draw, others)
            new, stmts = other.shape, [call(op, other.expr)]
        else:
            new = choose(draw, [r for r in RESIZE_SHAPES if r != s])
            stmts, op = [call("resize_", *consts(new))], "resize_"
        tags: tuple[str, ...] = (op,)
        if prod(new) > prod(s):
            writes, bound, kind = _writes_all(draw, path, new, pool)
            stmts += writes
            tags += (kind,)
        return OpResult(stmts, new, bound, tags, False, linspace(new))
    if op == "as_strided_":
        n = prod(s)
        layouts = [((n,), (1,)), (((n + 1) // 2,), (2,))]
        if len(s) == 2:
            layouts.append(((s[1], s[0]), (1, s[1])))
        size, stride = choose(draw, layouts)
        post = ir.method(linspace((n,)), "as_strided", ir.TupleExpr(consts(size)), ir.TupleExpr(consts(stride)))
        return OpResult([call(op, ir.TupleExpr(consts(size)), ir.TupleExpr(consts(stride)))], size, bound, (op,),
                        stride != (1,), post)
    # set_: share a fresh tensor's storage, an input's storage, or nothing at all.
    inputs = [v for v in pool if v.name in input_names]
    src_kind = choose(draw, ("fresh", "empty") + (("input",) if inputs else ()))
    if src_kind == "empty":
        return OpResult([call(op)], (0,), bound, (op,), False, linspace((0,)))
    if src_kind == "input":
        src = choose(draw, inputs)
        return OpResult([call(op, src.expr)], src.shape, src.bound, (op,), None)
    new = choose(draw, ((2, 3), (4,), (3, 3)))
    return OpResult([call(op, _fresh_expr(new, like))], new, 1.0, (op,), False, linspace(new))


def data_op(draw, op: str, target: Target, path: ir.Expr, pool: list[TensorVar]) -> OpResult:
    """One in-place data op; the target's shape is unchanged, its bound may grow a little."""
    s, bound = target.var.shape, target.var.bound
    if op == "index-assign":
        index: ir.Expr = ir.Const(0) if boolean(draw) else ir.TupleExpr((ir.Const(...), ir.Const(-1)))
        value = choose(draw, (1.5, -0.5))
        return OpResult([ir.Assign(ir.Sub(path, index), ir.Const(value))], s, max(bound, 1.5), (op,))
    if op in ("add_", "copy_"):
        srcs = [v for v in pool if _broadcasts(v.shape, s)]
        if srcs and boolean(draw):
            expr, _, b2 = tensor_ops.unary(draw, choose(draw, srcs))
            return OpResult([ir.ExprStmt(ir.method(path, op, expr))], s, b2 if op == "copy_" else bound + b2, (op,))
        if op == "copy_":
            return OpResult([ir.ExprStmt(ir.method(path, op, ir.call("torch.ones_like", path)))], s, max(bound, 1.0),
                            (op,))
        c = choose(draw, (1, -0.5))
        return OpResult([ir.ExprStmt(ir.method(path, op, ir.Const(c)))], s, bound + 1, (op,))
    if op == "mul_":
        c = choose(draw, (0.5, -1.0))
        return OpResult([ir.ExprStmt(ir.method(path, op, ir.Const(c)))], s, bound, (op,))
    if op == "fill_":
        return OpResult([ir.ExprStmt(ir.method(path, op, ir.Const(0.25)))], s, max(bound, 0.25), (op,))
    return OpResult([ir.ExprStmt(ir.method(path, "zero_"))], s, bound, (op,))


def out_op(draw, variant: str, target: Target, path: ir.Expr, pool: list[TensorVar], safe_src: bool) -> OpResult:
    """`torch.<op>(src, ..., out=path)`: same shape, resized, into an empty or a non-contiguous out."""
    s = target.var.shape

    def operand(v: TensorVar) -> tuple[ir.Expr, float]:
        expr, bound = tensor_ops.squash(v)
        return (expr, bound) if safe_src else (ir.BinOp(expr, "*", ir.Const(0.5)), bound * 0.5)

    def result(stmt: ir.Stmt, src: TensorVar, shape: tuple[int, ...], bound: float, how: str) -> OpResult:
        tag = variant if variant in ("out-empty", "out-noncontig") else "out-same" if shape == s else "out-resize"
        # A later call may start from the result's layout only when the op does not read the target itself.
        post = linspace(shape) if src.name != target.var.name or shape == s else None
        return OpResult([stmt], shape, bound, (tag, how), False if shape != s else None, post)

    same = [v for v in pool if v.shape == s]
    pool = [v for v in pool if v.name != target.var.name]  # a resizing op must not read the tensor it resizes
    other = [v for v in pool if v.shape != s and v.shape]
    want_same = variant == "out-same" or (variant == "out-noncontig" and same and boolean(draw))
    if want_same and same:
        src = choose(draw, same)
        fn = choose(draw, OUT_UNARY)
        expr, bound = operand(src)
        return result(_out_call(fn, (expr,), path), src, s, bound if fn in ("torch.abs", "torch.neg") else 1.0,
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
            return result(_out_call(fn, (expr, ir.Const(dim)), path), src, shape, bound, "out-reduction")
    fn = choose(draw, OUT_UNARY)
    expr, bound = operand(src)
    return result(_out_call(fn, (expr,), path), src, src.shape, bound if fn in ("torch.abs", "torch.neg") else 1.0,
                  "out-pointwise")


def _out_call(fn: str, args: tuple[ir.Expr, ...], out: ir.Expr) -> ir.Stmt:
    return ir.ExprStmt(ir.Call(ir.dotted(fn), args, (("out", out),)))


# ---- reading metadata back ---------------------------------------------------------


def read_back(draw, b: Builder, var: TensorVar) -> None:
    """Read the mutated tensor's metadata in Python and use the numbers in computation and outputs."""
    s = var.shape
    kinds = [k for k in READS if s or k in ("shape", "size", "stride", "dim", "contiguous")]
    for kind in draw(st.lists(st.sampled_from(kinds), min_size=1, max_size=2, unique=True)):
        k = b.fresh("k")
        d = integer(draw, 0, len(s) - 1) if s else None
        if kind == "iter":
            if s[0] > 4:
                continue
            b.emit(ir.Assign(ir.Name(k), ir.Const(0)))
            row = b.fresh("row")
            b.emit(ir.For(ir.Name(row), var.expr, (ir.Assign(ir.Name(k), ir.BinOp(
                ir.Name(k), "+", ir.method(ir.call("torch.tanh", ir.Name(row)), "sum"))),)))
            b.returns.append(ir.Name(k))
            b.tag("read-iter")
            continue
        value, factor = _read_expr(kind, var, d)
        b.emit(ir.Assign(ir.Name(k), value))
        b.returns.append(ir.Name(k))
        used = tensor_ops.pick(draw, b)
        operand, bound = tensor_ops.squash(used)
        b.bind(b.fresh("u"), ir.BinOp(operand, "*", ir.Name(k)), used.shape, bound * factor)
        b.tag(f"read-{kind}")


def _read_expr(kind: str, var: TensorVar, d: int | None) -> tuple[ir.Expr, float]:
    x, s = var.expr, var.shape
    if kind == "shape":
        return (ir.Sub(ir.Attr(x, "shape"), ir.Const(d)) if s else ir.call("len", ir.Attr(x, "shape"))), 8
    if kind == "size":
        return (ir.method(x, "size", ir.Const(d)) if s else ir.call("len", ir.method(x, "size"))), 8
    if kind == "stride":
        return (ir.Sub(ir.method(x, "stride"), ir.Const(d)) if s else ir.call("len", ir.method(x, "stride"))), 16
    if kind == "dim":
        return ir.method(x, "dim"), 4
    if kind == "len":
        return ir.call("len", x), 8
    return ir.IfExp(ir.method(x, "is_contiguous"), ir.Const(1), ir.Const(2)), 2


# ---- the fragments -------------------------------------------------------------------


def _mutate(draw, b: Builder, family_op: str, want: str | None = None) -> None:
    """Shared body: target, access path, op, shape bookkeeping, metadata reads, call plan."""
    kind = choose(draw, TARGET_KINDS)
    target = make_target(draw, b, kind, want)
    var = target.var
    like = _like(b)
    in_closure = target.kind == "closure"
    input_names = () if in_closure else tuple(p.name for p in b.params if p.tensor is not None)
    noncontig = target.noncontig or var.name in _state(b).noncontig

    def make_op(path: ir.Expr, pool: list[TensorVar]) -> OpResult:
        return _draw_op(draw, family_op, target, path, pool, ir.Name("t") if in_closure else like, input_names,
                        noncontig)

    shape_before = var.shape
    result = emit_through(draw, b, target, make_op)
    b.tag(f"target-{target.kind}" if target.kind != "closure" else "target-cell", *result.tags)
    state = _state(b)
    for name in (var.name, *target.alias_names):
        for v in b.root.tensors:
            if v.name == name:
                v.shape, v.bound = result.shape, result.bound
        if result.noncontig is True:
            state.noncontig.add(name)
        elif result.noncontig is False:
            state.noncontig.discard(name)
    if target.base is not None and family_op == "data":
        target.base.bound = max(target.base.bound, result.bound)
    read_back(draw, b, var)
    _plan(draw, b, target, result, shape_before)


def _draw_op(draw, family_op: str, target: Target, path: ir.Expr, pool: list[TensorVar], like: ir.Expr,
             input_names: tuple[str, ...], noncontig: bool) -> OpResult:
    s = target.var.shape
    if family_op == "out":
        variant = "out-empty" if prod(s) == 0 else "out-noncontig" if noncontig \
            else choose(draw, ("out-same", "out-resize"))
        safe = target.kind in ("intermediate", "global", "closure")
        return out_op(draw, variant, target, path, pool, safe)
    if family_op == "data":
        ops = [o for o in DATA_OPS if o != "index-assign" or (s and s[0] >= 1 and prod(s) > 0)]
        if target.persistent:
            ops = [o for o in ops if o != "add_"]
        return data_op(draw, choose(draw, ops), target, path, pool)
    ops = [o for o in META_OPS if _meta_allowed(o, s, target.persistent)]
    if "transpose_" in ops:  # it needs two dims, so it is allowed less often than the others: weigh it twice
        ops.append("transpose_")
    return meta_op(draw, choose(draw, ops), target, path, pool, like, input_names)


def _meta_allowed(op: str, s: tuple[int, ...], persistent: bool) -> bool:
    if op == "t_":
        return len(s) <= 2 and (not persistent or len(s) < 2 or s[0] == s[1])
    if op in ("transpose_", "swapdims_"):
        square_pair = any(s[i] == s[j] for i in range(len(s)) for j in range(i + 1, len(s)))
        return len(s) >= 2 and (not persistent or square_pair)
    if op == "unsqueeze_":
        return not persistent
    if op == "as_strided_":
        return prod(s) >= 2
    return True


def _plan(draw, b: Builder, target: Target, result: OpResult, shape_before: tuple[int, ...]) -> None:
    """Call again with a fresh original-layout input, and, where valid, with the post-mutation layout."""
    changed = result.shape != shape_before or result.noncontig is not None
    param = target.param
    if result.shape and param is not None and result.post_layout is not None and changed and not param.per_call:
        param.per_call[1] = result.post_layout
        b.calls = max(b.calls, 3)
        b.tag("plan-mutated-layout", "plan-fresh")
    elif boolean(draw):
        b.calls = max(b.calls, 3)
        b.tag("plan-fresh")


@fragment("resizes", "out-variant", weight=3, nestable=False)
def out_variant(draw, b):
    """`torch.op(..., out=t)` where `t` has the result's shape, another shape, no elements, or odd strides."""
    _mutate(draw, b, "out", choose(draw, (None, None, "empty", "noncontig")))


@fragment("resizes", "metadata-op", weight=4, nestable=False)
def metadata_op(draw, b):
    """A metadata op (`t_`, `transpose_`, `squeeze_`, `resize_`, `as_strided_`, `set_`...)."""
    _mutate(draw, b, "meta")


@fragment("resizes", "data-op", weight=2, nestable=False)
def data_op_fragment(draw, b):
    """An in-place data op (`add_`, `mul_`, `copy_`, `fill_`, `zero_`, indexed assignment)."""
    _mutate(draw, b, "data")
