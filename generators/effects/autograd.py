"""Autograd side effects: tensor hooks on inputs and intermediates (handle dropped, kept or removed),
`saved_tensors_hooks` around the region, and a small `autograd.Function` using `save_for_backward`.

Each fragment adds its own leaf input that requires grad and returns a tensor computed from it;
the harness then runs backward, so `.grad` (and what recording hooks appended to a global list)
lands in the state snapshot. Hooks are deterministic functions of the gradient.
"""
from __future__ import annotations

from .. import ir
from ..builder import Builder
from ..choose import boolean
from ..fragments import fragment
from .common import FAMILY, choice, grad_input, stmt

T, GRAD, CTX = ir.Name("t"), ir.Name("grad"), ir.Name("ctx")


def _hook_fn(draw, b: Builder) -> tuple[ir.Expr, str]:
    """A gradient hook: a scaling lambda, or a module function recording what it saw in a global list."""
    if boolean(draw):
        return ir.Lambda(("grad",), ir.BinOp(GRAD, "*", ir.Const(draw(choice((2, -0.5, 3)))))), "hook-scale"
    seen = b.fresh("SEEN_").upper()
    b.add_global(seen, ir.ListExpr(()))
    record = ir.method(ir.Name(seen), "append", ir.method(ir.method(GRAD, "detach"), "clone"))
    if not boolean(draw):
        return ir.Lambda(("grad",), record), "hook-record"
    fn = b.fresh("record")
    b.add_helper(ir.Def(fn, (ir.Param("grad"),), (stmt(record),)))
    return ir.Name(fn), "hook-record"


@fragment(FAMILY, "hook", weight=3, nestable=False)
def tensor_hook(draw, b: Builder) -> None:
    """`register_hook` on an input or an intermediate; the handle dropped, kept in a global, or removed."""
    g = grad_input(b)
    on = draw(choice(("input", "intermediate")))
    target: ir.Expr = g
    if on == "intermediate":
        mid = b.fresh("h")
        b.emit(ir.Assign(ir.Name(mid), ir.BinOp(g, "*", ir.Const(2))))
        target = ir.Name(mid)
    fn, kind = _hook_fn(draw, b)
    handle = draw(choice(("dropped", "kept", "removed")))
    reg = ir.method(target, "register_hook", fn)
    if handle == "dropped":
        b.emit(stmt(reg))
    else:
        h = b.fresh("handle")
        b.emit(ir.Assign(ir.Name(h), reg))
        if handle == "kept":
            store = b.fresh("HANDLES_").upper()
            b.add_global(store, ir.ListExpr(()))
            b.emit(stmt(ir.method(ir.Name(store), "append", ir.Name(h))))
        else:
            b.emit(stmt(ir.method(ir.Name(h), "remove")))
    out = b.fresh("u")
    b.emit(ir.Assign(ir.Name(out), ir.BinOp(ir.method(target, "sin"), "*", ir.Const(3))))
    b.returns.append(ir.Name(out))
    b.tag(f"hook-{on}", f"handle-{handle}", kind)


@fragment(FAMILY, "saved-tensors-hooks", weight=1, nestable=False)
def saved_tensors_hooks(draw, b: Builder) -> None:
    """Pack/unpack hooks (`t * 2` / `t / 2`, exact in binary) around the region's autograd ops."""
    g = grad_input(b, offset=-0.25)
    pack, unpack = ir.Lambda(("t",), ir.BinOp(T, "*", ir.Const(2))), ir.Lambda(("t",), ir.BinOp(T, "/", ir.Const(2)))
    if boolean(draw):
        names = b.fresh("pack"), b.fresh("unpack")
        for fn_name, fn in zip(names, (pack, unpack)):
            b.add_helper(ir.Def(fn_name, (ir.Param("t"),), (ir.Return(fn.body),)))
        pack, unpack = ir.Name(names[0]), ir.Name(names[1])
    out = b.fresh("u")
    body = ir.BinOp(g, "*", g) if boolean(draw) else ir.method(ir.method(g, "exp"), "sin")
    ctx = ir.call("torch.autograd.graph.saved_tensors_hooks", pack, unpack)
    b.emit(ir.With(((ctx, None),), (ir.Assign(ir.Name(out), ir.method(body, "cos")),)))
    b.returns.append(ir.Name(out))
    b.tag("saved-tensors-hooks")


def function_class(b: Builder, kind: str, ctx_attr: bool) -> str:
    """`class FnN(torch.autograd.Function)` computing x*x (saves the input) or exp (saves the output)."""
    cls = b.fresh("Fn")
    x, y = ir.Name("x"), ir.Name("y")
    saved = ir.Sub(ir.Attr(CTX, "saved_tensors"), ir.Const(0))
    if kind == "square":
        fwd: tuple[ir.Stmt, ...] = (stmt(ir.method(CTX, "save_for_backward", x)), ir.Return(ir.BinOp(x, "*", x)))
        grad_of = ir.BinOp(ir.BinOp(GRAD, "*", ir.Const(2)), "*", saved)
    else:
        fwd = (ir.Assign(y, ir.method(x, "exp")), stmt(ir.method(CTX, "save_for_backward", y)), ir.Return(y))
        grad_of = ir.BinOp(GRAD, "*", saved)
    if ctx_attr:
        fwd = (ir.Assign(ir.Attr(CTX, "k"), ir.Const(3)), *fwd)
        grad_of = ir.BinOp(grad_of, "*", ir.Attr(CTX, "k"))
    static = (ir.Name("staticmethod"),)
    forward = ir.Def("forward", (ir.Param("ctx"), ir.Param("x")), fwd, static)
    backward = ir.Def("backward", (ir.Param("ctx"), ir.Param("grad")), (ir.Return(grad_of),), static)
    b.add_helper(ir.ClassDef(cls, (ir.dotted("torch.autograd.Function"),), (forward, backward)))
    return cls


@fragment(FAMILY, "autograd-function", weight=2, nestable=False)
def autograd_function(draw, b: Builder) -> None:
    """A custom autograd.Function with save_for_backward, applied to an input or an intermediate."""
    g = grad_input(b)
    kind = draw(choice(("square", "exp")))
    cls = function_class(b, kind, boolean(draw))
    arg: ir.Expr = g if boolean(draw) else ir.call("torch.tanh", g)
    b.returns.append(ir.method(ir.Name(cls), "apply", arg))
    b.tag(f"autograd-function-{kind}")
