"""Function transforms and custom autograd: `autograd.Function` in the forms `effects.autograd` does not
draw (setup_context, several outputs, `mark_non_differentiable`, `needs_input_grad`, `once_differentiable`,
non-tensor ctx attributes and arguments), torch.func (vmap with in_dims/out_dims, nested and over a
closure; grad, grad_and_value, jacrev, jacfwd on tiny shapes; functional_call on a module) and
`torch.utils.checkpoint.checkpoint(..., use_reentrant=False)`.

These are higher-order ops Dynamo traces through its own `variables/higher_order_ops.py` and
`variables/torch_function.py` paths; they cost more to compile, so their weights stay low.
"""
from __future__ import annotations

from .. import ir
from ..builder import Builder
from ..choose import boolean, choose
from ..effects.common import grad_input
from ..fragments import fragment
from .common import FAMILY, helper, operand, result
from .nn import module_class


@fragment(FAMILY, "classes", "autograd-ctx", weight=3, nestable=False)
def autograd_ctx(draw, b: Builder) -> None:
    """A custom autograd.Function on an input that requires grad: `setup_context` or classic form, two
    outputs (one marked non-differentiable), a float argument kept on ctx, `needs_input_grad` checked."""
    cls = b.fresh("Fn")
    g = grad_input(b, (3,), choose(draw, (0.25, -0.5)))
    setup = boolean(draw)
    once = boolean(draw) and not setup
    if once:
        b.add_import(ir.ImportFrom("torch.autograd.function", ("once_differentiable",)))
    deco = "    @staticmethod\n" + ("    @once_differentiable\n" if once else "")
    if setup:
        fwd = """
    @staticmethod
    def forward(x, k):
        y = torch.sin(x) * k
        return y, (x > 0).to(x.dtype)

    @staticmethod
    def setup_context(ctx, inputs, output):
        x, k = inputs
        ctx.k = k
        ctx.mark_non_differentiable(output[1])
        ctx.save_for_backward(x)
"""
    else:
        fwd = """
    @staticmethod
    def forward(ctx, x, k):
        ctx.k = k
        ctx.save_for_backward(x)
        mask = (x > 0).to(x.dtype)
        ctx.mark_non_differentiable(mask)
        return torch.sin(x) * k, mask
"""
    helper(b, f"""
class $C(torch.autograd.Function):{fwd}
{deco}    def backward(ctx, grad, grad_mask):
        (x,) = ctx.saved_tensors
        if not ctx.needs_input_grad[0]:
            return None, None
        return grad * torch.cos(x) * ctx.k, None
""", C=cls)
    y, mask = b.fresh("y"), b.fresh("mask")
    b.emit(ir.Code(f"{y}, {mask} = {cls}.apply({g.id}, {choose(draw, (2.0, 0.5))})"))
    b.returns.append(ir.CodeExpr(f"{y} * (1 + {mask})"))


@fragment(FAMILY, "classes", "func-vmap", weight=5)
def func_vmap(draw, b: Builder) -> None:
    """`torch.func.vmap` of a per-row function: plain, with in_dims (a broadcast operand), out_dims=1,
    nested, or over a closure reading a tensor of the frame."""
    t, var, _ = operand(draw, b, vector=True)
    if not var.shape or 0 in var.shape:
        return  # an empty tensor (a zero-length view another fragment made) has no rows to map over
    rows = f"torch.tanh({t}).reshape(-1, {var.shape[-1]})"
    n_rows = var.numel // var.shape[-1]
    w = b.fresh("vw")
    b.emit(ir.Code(f"{w} = torch.linspace(-1.0, 1.0, {var.shape[-1]}, device={t}.device)"))
    kind = choose(draw, ("plain", "in-dims", "out-dims", "nested", "closure"))
    if kind == "plain":
        expr, shape = f"torch.func.vmap(lambda r: torch.sin(r) * r.sum())({rows})", (n_rows, var.shape[-1])
    elif kind == "in-dims":
        expr, shape = f"torch.func.vmap(lambda r, u: r * u + 1, in_dims=(0, None))({rows}, {w})", \
            (n_rows, var.shape[-1])
    elif kind == "out-dims":
        expr, shape = f"torch.func.vmap(lambda r: torch.cos(r), out_dims=1)({rows})", (var.shape[-1], n_rows)
    elif kind == "nested":
        expr, shape = f"torch.func.vmap(torch.func.vmap(lambda s: s * 2 + torch.sin(s)))({rows})", \
            (n_rows, var.shape[-1])
    else:
        fn = b.fresh("per_row")
        b.emit(ir.Code(f"def {fn}(r):\n    return torch.tanh(r * {w}) + {w}.sum()"))
        expr, shape = f"torch.func.vmap({fn})({rows})", (n_rows, var.shape[-1])
    result(b, expr, shape, 30.0)


@fragment(FAMILY, "classes", "func-grad", weight=3)
def func_grad(draw, b: Builder) -> None:
    """torch.func.grad / grad_and_value of a scalar function, or jacrev / jacfwd of a tiny vector
    function, applied to a visible tensor (flattened to at most 4 elements)."""
    t, var, _ = operand(draw, b, vector=True)
    n = min(var.numel, 4)
    v = f"torch.tanh({t}).flatten()[:{n}]"
    kind = choose(draw, ("grad", "grad-and-value", "jacrev", "jacfwd"))
    if kind == "grad":
        expr, shape = f"torch.func.grad(lambda u: (torch.sin(u) * u).sum())({v})", (n,)
    elif kind == "grad-and-value":
        gv = b.fresh("gv")
        b.emit(ir.Code(f"{gv} = torch.func.grad_and_value(lambda u: torch.cos(u).sum() * 0.5)({v})"))
        expr, shape = f"{gv}[0] + {gv}[1]", (n,)
    else:
        fn = "torch.func." + kind.replace("-", "")
        expr, shape = f"{fn}(lambda u: torch.sin(u) * u.sum())({v})", (n, n)
    result(b, expr, shape, 10.0)


@fragment(FAMILY, "classes", "func-functional-call", weight=5)
def func_functional_call(draw, b: Builder) -> None:
    """`torch.func.functional_call` on a global module with a replacement dict for some parameters."""
    t, var, _ = operand(draw, b, vector=True)
    cls = module_class(draw, b, extra_init=("self.gain = torch.nn.Parameter(torch.ones(n))",),
                       extra_fwd=("x = x * self.gain",))
    m = b.fresh("FC_")
    b.add_global(m, ir.CodeExpr(f"{cls}({var.shape[-1]})"))
    n = var.shape[-1]
    repl = f"{{'gain': torch.linspace(0.5, 1.5, {n}, device={t}.device)}}"
    if boolean(draw):
        repl = f"dict({m}.named_parameters(), **{repl})"
    result(b, f"torch.tanh(torch.func.functional_call({m}, {repl}, (torch.tanh({t}),)))", var.shape, 1.0,
           grad=True)


@fragment(FAMILY, "classes", "checkpoint", weight=5)
def checkpoint(draw, b: Builder) -> None:
    """`torch.utils.checkpoint.checkpoint(fn, x, use_reentrant=False)` around a module-level function or
    a closure of the frame."""
    b.add_import(ir.Import("torch.utils.checkpoint"))
    t, var, _ = operand(draw, b)
    if boolean(draw):
        fn = b.fresh("ckpt_body")
        helper(b, """
            def $F(u, k):
                return torch.sin(u) * k + torch.cos(u)
            """, F=fn)
        call = f"torch.utils.checkpoint.checkpoint({fn}, torch.tanh({t}), 2.0, use_reentrant=False)"
    else:
        scale = b.fresh("ck")
        b.emit(ir.Code(f"{scale} = torch.tanh({t}) * 0.5"))
        call = f"torch.utils.checkpoint.checkpoint(lambda u: torch.sin(u) + {scale}, {t}, use_reentrant=False)"
    result(b, call, var.shape, 4.0)


@fragment(FAMILY, "classes", "autograd-grad", weight=5, nestable=False)
def autograd_grad(draw, b: Builder) -> None:
    """`torch.autograd.grad` inside the frame, of a scalar function of an input leaf that requires grad
    (first order, or with `create_graph=True` so the harness's backward differentiates it again)."""
    g = grad_input(b, (3,), choose(draw, (0.25, -0.5)))
    create = boolean(draw)
    d = b.fresh("dg")
    b.emit(ir.Code(f"({d},) = torch.autograd.grad((torch.sin({g.id}) * {g.id}).sum(), {g.id}, "
                   f"create_graph={create})"))
    b.returns.append(ir.CodeExpr(f"{d} * 2 + torch.cos({g.id})"))


@fragment(FAMILY, "classes", "pytree-map", weight=5)
def pytree_map(draw, b: Builder) -> None:
    """`torch.utils._pytree.tree_map` of a function over a nested dict/list/tuple holding tensors and
    numbers, then the leaves folded back (`tree_leaves`)."""
    b.add_import(ir.Import("torch.utils._pytree"))
    t, var, _ = operand(draw, b)
    tree, mapped = b.fresh("tree"), b.fresh("mapped")
    b.emit(ir.Code(f"{tree} = {{'a': torch.tanh({t}), 'b': [torch.sin({t}), ({t} * 0.5, 2.0)]}}"))
    fn = choose(draw, ("lambda v: v * 2", "lambda v: v + 1"))
    b.emit(ir.Code(f"{mapped} = torch.utils._pytree.tree_map({fn}, {tree})"))
    leaves = f"torch.utils._pytree.tree_leaves({mapped})"
    result(b, f"sum(torch.tanh(torch.as_tensor(v)) for v in {leaves}) + {mapped}['b'][1][1]", var.shape, 8.0)
