"""What the `resizes` family mutates: targets (an input, an intermediate, a view, an aliased argument,
a module global, a closure cell) and the access paths that reach them (directly, a nested function's
cell, a list, a dict, an object attribute).

Each target kind and each access path is one entry in a table; the per-program facts that shapes alone
do not capture (which tensors are non-contiguous, which names are the same object, which inputs were
already mutated) live in `ResizeState` on the builder.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from math import prod

from .. import ir, tensor_ops
from ..builder import Builder, InputParam, TensorVar
from ..choose import boolean, choose

STATE_KEY = "resizes"


@dataclass
class ResizeState:
    """Per-program facts for the resizes fragments: layouts, object identity, mutated inputs."""

    noncontig: set[str] = field(default_factory=set)
    same_object: dict[str, set[str]] = field(default_factory=dict)
    aliased_params: set[str] = field(default_factory=set)
    mutated: set[str] = field(default_factory=set)  # names whose shape or layout an op already changed
    box: bool = False


def state(b: Builder) -> ResizeState:
    return b.state(STATE_KEY, ResizeState)


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

    @property
    def shares_storage(self) -> set[str]:
        """Names that read the target's memory: an op that resizes the target must not read them."""
        names = {self.var.name, *self.alias_names}
        if self.base is not None:
            names.add(self.base.name)
        return names


def fresh_expr(shape: tuple[int, ...], like: ir.Expr | None) -> ir.Expr:
    """A deterministic tensor of `shape`, on `like`'s device (module level when `like` is None)."""
    n = prod(shape)
    device = {"device": ir.Attr(like, "device")} if like is not None else {}
    if n == 0:
        return ir.call("torch.zeros", *(ir.Const(s) for s in shape), **device)
    base = ir.call("torch.linspace", ir.Const(-1.0), ir.Const(1.0), ir.Const(n), **device)
    return base if len(shape) == 1 else ir.method(base, "reshape", *(ir.Const(s) for s in shape))


def noncontig_expr(shape: tuple[int, ...], like: ir.Expr | None) -> ir.Expr:
    return ir.method(fresh_expr((shape[1], shape[0]), like), "t")


def like(b: Builder) -> ir.Expr:
    """A tensor input whose `.device` tensors created inside the entry follow."""
    return next(ir.Name(p.name) for p in b.params if p.tensor is not None)


def inputs(b: Builder) -> list[TensorVar]:
    """Tensor inputs a fragment may mutate: visible ones (a construct's private input is not), no grad leaf."""
    st = state(b)
    visible = {id(v) for v in b.root.tensors}
    return [p.tensor for p in b.params if p.tensor is not None and id(p.tensor) in visible
            and not p.tensor.requires_grad and p.name not in st.aliased_params]


def param(b: Builder, name: str) -> InputParam:
    return next(p for p in b.params if p.name == name)


def want_shape(draw, want: str | None) -> tuple[int, ...]:
    if want == "empty":
        return choose(draw, ((0,), (0, 3), (2, 0)))
    if want == "noncontig":
        return choose(draw, ((3, 4), (2, 3), (4, 2)))
    return choose(draw, ((4, 4), (3, 4), (3, 3), (4,), (1, 4), (2, 3)))


def on_device(expr: ir.Expr) -> ir.Expr:
    """Rewrite a module-level constructor so `inputs(device)` builds it on `device`."""
    if isinstance(expr, ir.Call) and expr.func in (ir.dotted("torch.linspace"), ir.dotted("torch.zeros")):
        return ir.Call(expr.func, expr.args, (("device", ir.Name("device")),))
    if isinstance(expr, ir.Call) and isinstance(expr.func, ir.Attr):
        return ir.Call(ir.Attr(on_device(expr.func.value), expr.func.attr), expr.args, expr.kwargs)
    return expr


# ---- target kinds --------------------------------------------------------------


def _input(draw, b: Builder, want: str | None) -> Target:
    st = state(b)
    existing = inputs(b)
    if want is None and existing:
        var = choose(draw, existing)
        p = param(b, var.name)
        fresh = not b.root.stmts and not st.same_object.get(var.name) and not p.per_call
        return Target("input", var, param=p if fresh else None, alias_names=tuple(st.same_object.get(var.name, ())))
    shape = want_shape(draw, want)
    name = b.fresh("p")
    make = on_device(noncontig_expr(shape, None) if want == "noncontig" else fresh_expr(shape, None))
    var = TensorVar(name, shape, 1.0)
    p = InputParam(name, make, tensor=var)
    b.params.append(p)
    b.root.tensors.append(var)
    if want == "noncontig":
        st.noncontig.add(name)
    return Target("input", var, param=p)


def _intermediate(draw, b: Builder, want: str | None) -> Target:
    name = b.fresh("w")
    if want is None:
        expr, shape, bound = tensor_ops.unary(draw, tensor_ops.pick(draw, b))
        return Target("intermediate", b.bind(name, expr, shape, bound))
    shape = want_shape(draw, want)
    dev = like(b)
    expr = noncontig_expr(shape, dev) if want == "noncontig" else fresh_expr(shape, dev)
    var = b.bind(name, expr, shape, 1.0)
    if want == "noncontig":
        state(b).noncontig.add(name)
    return Target("intermediate", var)


def _view_or_alias(kind: str) -> Callable[..., Target]:
    def make(draw, b: Builder, want: str | None) -> Target:
        st = state(b)
        # An aliased argument is built in `inputs()` from the input as it is passed in, so its base must not
        # have been re-shaped or re-laid-out by the body already (the tracked shape would be the mutated one).
        bases = [v for v in inputs(b) if v.shape and (kind == "view" or (
            not param(b, v.name).per_call and v.name not in st.mutated))]
        if not bases:
            return _intermediate(draw, b, want)
        base = choose(draw, bases)
        expr, shape, noncontig = view_of(draw, b, base, want, same_allowed=kind == "aliased")
        if kind == "view":
            var = b.bind(b.fresh("v"), expr, shape, base.bound)
        else:
            name = b.fresh("a")
            var = TensorVar(name, shape, base.bound)
            b.params.append(InputParam(name, expr, tensor=var))
            b.root.tensors.append(var)
            st.aliased_params.update((name, base.name))
        if noncontig:
            st.noncontig.add(var.name)
        if expr == base.expr:
            st.same_object.setdefault(base.name, set()).add(var.name)
            st.same_object.setdefault(var.name, set()).add(base.name)
            return Target(kind, var, alias_names=(base.name,))
        return Target(kind, var, base=base)

    return make


def _persistent(kind: str) -> Callable[..., Target]:
    """A module global, or the closure cell of a pre-existing function (made in `emit_through`)."""

    def make(draw, b: Builder, want: str | None) -> Target:
        shape = want_shape(draw, want)
        name = b.fresh("G").upper() if kind == "global" else "c"
        var = TensorVar(name, shape, 1.0)
        if kind == "global":
            b.add_global(name, noncontig_expr(shape, None) if want == "noncontig" else fresh_expr(shape, None))
            b.root.tensors.append(var)
            if want == "noncontig":
                state(b).noncontig.add(name)
        return Target(kind, var, persistent=True, noncontig=want == "noncontig")

    return make


TARGETS: dict[str, Callable[..., Target]] = {
    "input": _input,
    "intermediate": _intermediate,
    "view": _view_or_alias("view"),
    "aliased": _view_or_alias("aliased"),
    "global": _persistent("global"),
    "closure": _persistent("closure"),
}


def make_target(draw, b: Builder, want: str | None = None) -> Target:
    """Create or choose the tensor to mutate; `want` asks for an empty or a non-contiguous one."""
    return TARGETS[choose(draw, tuple(TARGETS))](draw, b, want)


# ---- views ---------------------------------------------------------------------

ViewFn = Callable[[ir.Expr, tuple[int, ...], bool], tuple[ir.Expr, tuple[int, ...], bool]]
VIEWS: dict[str, ViewFn] = {  # (expr, shape, base non-contiguous) -> (view, shape, view non-contiguous)
    "same": lambda x, s, nc: (x, s, nc),
    "slice": lambda x, s, nc: (ir.Sub(x, ir.Slice(ir.Const(1), None)), (s[0] - 1, *s[1:]), nc),
    "t": lambda x, s, nc: (ir.method(x, "t"), (s[1], s[0]), not nc),
    "flat": lambda x, s, nc: (ir.method(x, "view", ir.Const(-1)), (prod(s),), False),
}


def view_of(draw, b: Builder, base: TensorVar, want: str | None, same_allowed: bool):
    """(expr, shape, noncontiguous) of a view of `base` (or `base` itself for an aliased argument)."""
    x, s = base.expr, base.shape
    nc = base.name in state(b).noncontig
    if want == "empty":
        return ir.Sub(x, ir.Slice(None, ir.Const(0))), (0, *s[1:]), False
    if want == "noncontig" and len(s) == 2:
        return ir.method(x, "t"), (s[1], s[0]), True
    if want == "noncontig" and s[0] >= 2:
        return ir.Sub(x, ir.Slice(None, None, ir.Const(2))), ((s[0] + 1) // 2, *s[1:]), True
    allowed = {"same": same_allowed, "slice": s[0] > 1, "t": len(s) == 2, "flat": not nc}
    choices = [k for k in VIEWS if allowed[k]]
    if not choices:
        return x, s, nc
    return VIEWS[choose(draw, choices)](x, s, nc)


# ---- access paths --------------------------------------------------------------


def box_class() -> ir.ClassDef:
    init = ir.Def("__init__", (ir.Param("self"), ir.Param("t")),
                  (ir.Assign(ir.Attr(ir.Name("self"), "t"), ir.Name("t")),))
    return ir.ClassDef("Box", (), (init,))


def _holder(b: Builder, access: str, name: ir.Expr) -> tuple[str, ir.Expr]:
    """Put the tensor in a list, a dict or a `Box` attribute; returns the holder's name and the path."""
    holder = b.fresh({"list": "L", "dict": "D", "attr": "o"}[access])
    if access == "list":
        b.emit(ir.Assign(ir.Name(holder), ir.ListExpr((name,))))
        return holder, ir.Sub(ir.Name(holder), ir.Const(0))
    if access == "dict":
        b.emit(ir.Assign(ir.Name(holder), ir.DictExpr(((ir.Const("t"), name),))))
        return holder, ir.Sub(ir.Name(holder), ir.Const("t"))
    st = state(b)
    if not st.box:
        b.add_helper(box_class())
        st.box = True
    b.emit(ir.Assign(ir.Name(holder), ir.call(ir.Name("Box"), name)))
    return holder, ir.Attr(ir.Name(holder), "t")


ACCESS_KINDS = ("direct", "cell", "list", "dict", "attr")


def emit_through(draw, b: Builder, target: Target, make_op):
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
    if access == "direct":
        result = make_op(name, pool)
        b.emit(*result.stmts)
        return result
    if access == "cell":
        fn = b.fresh("g")
        result = make_op(name, pool)
        b.emit(ir.Def(fn, (), (*result.stmts, ir.Return(ir.Const(None)))))
        b.emit(ir.ExprStmt(ir.call(ir.Name(fn))))
        b.tag("target-cell")
        return result
    holder, path = _holder(b, access, name)
    result = make_op(path, pool)
    b.emit(*result.stmts)
    if boolean(draw):
        b.returns.append(ir.Name(holder))
    b.tag(f"target-{access}")
    return result


def _emit_closure(draw, b: Builder, target: Target, make_op):
    """A module-level factory whose function mutates its closure cell `c`; the entry calls it."""
    src = tensor_ops.pick(draw, b)
    arg = TensorVar("t", src.shape, src.bound)
    result = make_op(ir.Name("c"), [arg])
    fn, factory = b.fresh("h"), b.fresh("make_h")
    inner = ir.Def(fn, (ir.Param("t"),), (*result.stmts, ir.Return(ir.Name("c"))))
    shape = target.var.shape
    init = noncontig_expr(shape, None) if target.noncontig else fresh_expr(shape, None)
    b.add_helper(ir.Def(factory, (), (ir.Assign(ir.Name("c"), init), inner, ir.Return(ir.Name(fn)))))
    handle = fn.upper()
    b.add_global(handle, ir.call(ir.Name(factory)))
    out = b.fresh("r")
    b.emit(ir.Assign(ir.Name(out), ir.call(ir.Name(handle), src.expr)))
    target.var.name = out
    b.root.tensors.append(target.var)
    b.tag("target-cell", "cell-closure")
    return result
