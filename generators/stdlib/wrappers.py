"""Calls Dynamo turns into one node instead of inlining: the wrapper higher-order operators
(`wrap`, `wrap_with_set_grad_enabled`, `wrap_with_autocast`, `strict_mode`, `hints_wrapper`, `out_dtype`),
`flex_attention` with a score modifier, a `leaf_function` with its fake, an
`autograd.Function` applied with a keyword argument, and a loss module built inside the frame.

Each of these has its own handler (`variables/higher_order_ops.py`, `variables/torch.py`,
`variables/misc.py`, `UserDefinedClassVariable._call_cross_entropy_loss`) that speculates a subgraph,
checks its inputs and outputs and lifts its free tensors, code that ordinary calls never reach; a
wrongly lifted input or a lost output changes the value. Every form is a pure function of one tensor,
equal in eager and compiled runs by the operator's documented semantics.
"""
from __future__ import annotations

from .. import ir
from ..builder import Builder
from ..choose import choose
from ..fragments import fragment
from .common import FAMILY, bind_output, tensor_operand

_HOP = "torch.ops.higher_order"


def _hop_forms(a: str) -> list[tuple[str, float]]:
    """(expression shaped like `a`, bound given `a`'s bound 1) of each wrapper HOP."""
    return [
        (f"{_HOP}.wrap(lambda y, k: torch.sin(y) * k + y, {a}, 0.5)", 2),
        (f"{_HOP}.wrap_with_set_grad_enabled(False, lambda y: torch.cos(y) * 2, {a})", 2),
        (f"{_HOP}.wrap_with_autocast('cpu', torch.bfloat16, True, None, lambda y: torch.tanh(y) + y, {a})", 2),
        (f"{_HOP}.strict_mode(lambda y: torch.tanh(y) + 1, ({a},))", 2),
        (f"{_HOP}.hints_wrapper(lambda y: torch.relu(y) * 0.5, ({a},), {{}}, hints={{'outer_body': True}})", 1),
    ]


@fragment(FAMILY, FAMILY, "stdlib-hop-wrappers", weight=13)
def stdlib_hop_wrappers(draw, b: Builder) -> None:
    """A tensor through one wrapper higher-order operator (or `out_dtype`'s int8 product)."""
    var, a, bound = tensor_operand(draw, b)
    b.add_import(ir.Import("torch._higher_order_ops"))
    if choose(draw, range(6)) == 0:
        # int8 outer product accumulated in int32: (numel, numel)-shaped, |value| <= 16
        q = f"torch.round(torch.tanh({a}) * 4).to(torch.int8).reshape(-1, 1)"
        text = f"{_HOP}.out_dtype(torch.ops.aten.mm.default, torch.int32, {q}, {q}.t()).to(torch.float32)"
        bind_output(b, "hop", text, (var.numel, var.numel), 16)
        return
    text, factor = choose(draw, _hop_forms(a))
    bind_output(b, "hop", text, var.shape, max(bound, 1.0) * factor + 1)


def _flex(draw, b: Builder, a: str) -> str:
    """`flex_attention` over `a` as one head of length numel and width 1, with a score modifier: a convex
    combination of values, so bounded by `a`'s bound. (Not with a block mask: `create_block_mask` made in
    the frame took 1.6-2.6 s a case compiled, against 0.1 s for a typical case.)"""
    b.add_import(ir.Import("torch.nn.attention.flex_attention"))
    q = b.fresh("q")
    b.emit(ir.Code(f"{q} = ({a}).detach().reshape(1, 1, -1, 1)"))  # no backward on CPU: the value only
    mod = choose(draw, ("s + (qi - kv) * 0.25", "s * 0.5 + h", "torch.where(qi >= kv, s, s - 2.0)"))
    return (f"torch.nn.attention.flex_attention.flex_attention({q}, {q} * 0.5, {q}, "
            f"score_mod=lambda s, bi, h, qi, kv: {mod})")


_LEAF = """
@torch._dynamo.decorators.leaf_function
def {F}(t, k):
    return (torch.tanh(t) * k + 1, t.sum())
"""

_LEAF_FAKE = """
@{F}.register_fake
def {F}_fake(t, k):
    return (torch.empty_like(t), t.new_empty(()))
"""

_APPLY_KWARGS = """
class {C}(torch.autograd.Function):
    @staticmethod
    def forward(ctx, t, scale=2.0):
        return torch.sin(t) * scale

    @staticmethod
    def backward(ctx, g):
        return g, None
"""


@fragment(FAMILY, FAMILY, "stdlib-opaque-calls", weight=10)
def stdlib_opaque_calls(draw, b: Builder) -> None:
    """`flex_attention`, a `leaf_function` (its body run eagerly, its fake traced), an autograd.Function
    applied with a keyword argument, or a cross-entropy loss module constructed in the frame."""
    var, a, bound = tensor_operand(draw, b)
    # flex_attention once of four: eager flex compiles its own kernel wrapper (80 ms a call)
    kind = choose(draw, ("leaf", "apply-kwargs", "cross-entropy", "flex"))
    shape, out_bound = var.shape, max(bound, 1.0) + 1
    if kind == "flex":
        text = f"({_flex(draw, b, a)}).reshape({var.name}.shape)"
    elif kind == "leaf":
        fn = b.fresh("leaf_fn")
        b.add_helper(ir.Code(_LEAF.format(F=fn)))
        b.add_helper(ir.Code(_LEAF_FAKE.format(F=fn)))
        k = choose(draw, (0.5, 2.0))
        text = f"{fn}({a}, {k})[0]"
        out_bound = k + 1
    elif kind == "apply-kwargs":
        cls = b.fresh("ScaledSin")
        b.add_helper(ir.Code(_APPLY_KWARGS.format(C=cls)))
        k = choose(draw, (0.5, 3.0))
        text = f"{cls}.apply({a}, scale={k})"
        out_bound = k
    else:
        # logits of one sample over numel classes; |loss| <= log(numel) + 2 * bound
        target = f"torch.zeros(1, dtype=torch.long, device={var.name}.device)"
        smoothing = choose(draw, (0.0, 0.1))
        text = (f"torch.nn.CrossEntropyLoss(label_smoothing={smoothing})(({a}).reshape(1, -1), {target}) + "
                f"torch.nn.functional.cross_entropy(({a}).reshape(1, -1), {target}, reduction='sum')")
        shape, out_bound = (), 2 * (var.numel.bit_length() + 2 * max(bound, 1.0))
    bind_output(b, "oc", text, shape, out_bound)
