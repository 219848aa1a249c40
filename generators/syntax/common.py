"""Shared helpers of the `syntax` family: source-text statements, operands, and folding a Python value
into a returned tensor.

Syntax fragments write their statements as source (`ir.Code`), because the constructs they exercise
(match, while, try/finally, generators) have no IR node; every name in that source comes from
`b.fresh`, so fragments compose. Each fragment ends by binding a tensor that depends on what the
construct computed (`fold`), so a miscompile of it shows in the outputs.
"""
from __future__ import annotations

import ast
import textwrap

from .. import ir, tensor_ops
from ..builder import BOUND_LIMIT, Builder, TensorVar

FAMILY = "syntax"
GRAPH_BREAK = "torch._dynamo.graph_break()"


def code(b: Builder, text: str, *, module: bool = False) -> None:
    """Emit every statement of `text` (dedented source) into the current scope, or at module level."""
    for node in ast.parse(textwrap.dedent(text)).body:
        stmt = ir.Code(ast.unparse(node))
        if module:
            b.add_helper(stmt)
        else:
            b.emit(stmt)


def operand(draw, b: Builder, *, ndim: int | None = None) -> tuple[TensorVar, str, float]:
    """A visible tensor, its source text as an operand (tanh-squashed when large) and its bound."""
    var = tensor_ops.pick(draw, b, ndim=ndim)
    if var.bound > BOUND_LIMIT:
        return var, f"torch.tanh({var.name})", 1.0
    return var, var.name, var.bound


def fold(b: Builder, expr: str, shape: tuple[int, ...], bound: float, *, prefix: str = "s",
         requires_grad: bool = False) -> str:
    """Bind `expr` (a tensor expression as source) to a fresh name and return it from the entry."""
    name = b.fresh(prefix)
    b.bind(name, ir.CodeExpr(expr), shape, bound, requires_grad=requires_grad)
    if b.scope is b.root:
        b.returns.append(ir.Name(name))
    return name


def construct(*tags: str):
    """Mark a drawing function with the construct tags it exercises; the package `__init__` registers the functions
    in pairs (one fragment drawing two constructs), so each draw shows two constructs of the family."""

    def deco(fn):
        fn.tags = tags
        return fn

    return deco
