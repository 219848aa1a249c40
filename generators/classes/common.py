"""Helpers the `classes` fragment modules share: class bodies are written as Python source (`ir.Code`)
with `$names` filled in from `Builder.fresh`, so fragments compose, and every construct ends by binding a
tensor that depends on it (`result`), so a miscompile of the construct shows in the outputs.
"""
from __future__ import annotations

import re
import textwrap
from string import Template

from .. import ir, tensor_ops
from ..builder import Builder, TensorVar

FAMILY = "classes"


def src(text: str, **names: object) -> str:
    """`text` dedented, with `$name` placeholders replaced by `names` (braces stay literal)."""
    return Template(textwrap.dedent(text).strip("\n")).substitute({k: str(v) for k, v in names.items()})


def helper(b: Builder, text: str, **names: object) -> None:
    """One module-level statement (a class, a def, a decorated def) written as source."""
    b.add_helper(ir.Code(src(text, **names)))


def emit(b: Builder, text: str, **names: object) -> None:
    """One statement in the current scope, written as source."""
    b.emit(ir.Code(src(text, **names)))


def operand(draw, b: Builder, *, vector: bool = False) -> tuple[str, TensorVar, float]:
    """A visible tensor as source text, squashed when large; `vector`: at least one dimension."""
    var = tensor_ops.pick(draw, b)
    if vector and not var.shape:
        var = next((t for t in b.scope.visible_tensors() if t.shape), var)
    expr, bound = tensor_ops.squash(var)
    text = ir_text(expr)
    if vector and not var.shape:
        return f"{text}.reshape(1)", TensorVar(var.name, (1,), bound), bound
    return text, var, bound


def ir_text(expr: ir.Expr) -> str:
    from ..render import render_stmt

    return render_stmt(ir.ExprStmt(expr))


def result(b: Builder, text: str, shape: tuple[int, ...], bound: float, prefix: str = "k", *,
           grad: bool = False) -> str:
    """Bind a tensor computed by `text` and return it from the entry when drawn at its top level.

    `grad`: the tensor depends on parameters that require grad (or reads a pooled tensor that does). It is
    then kept out of the shared pool (at the top level it is only returned; in a nested body its detached
    copy joins the pool), so other families never draw it where a tensor requiring grad is illegal (an
    `out=` op, say).
    """
    name = b.fresh(prefix)
    words = set(re.findall(r"\w+", text))
    grad = grad or any(t.requires_grad and t.name in words for t in b.scope.visible_tensors())
    if not grad:
        b.bind(name, ir.CodeExpr(text), shape, bound)
    elif b.scope is b.root:
        b.emit(ir.Assign(ir.Name(name), ir.CodeExpr(text)))
    else:
        b.bind(name, ir.CodeExpr(f"({text}).detach()"), shape, bound)
    if b.scope is b.root:
        b.returns.append(ir.Name(name))
    return name


def where(draw, b: Builder) -> str:
    """Where an object the construct uses comes from: a global, an entry argument, or made in the frame."""
    from ..choose import choose

    return choose(draw, ("global", "new", "arg") if b.scope is b.root else ("global", "new"))


def place(b: Builder, kind: str, make: str, prefix: str = "obj") -> str:
    """A name bound to `make` (source text of an expression) as a global, an argument or a local."""
    if kind == "global":
        name = b.fresh(prefix.upper() + "_")
        b.add_global(name, ir.CodeExpr(make))
    elif kind == "arg":
        name = b.fresh(prefix)
        b.add_value_input(name, ir.CodeExpr(make))
    else:
        name = b.fresh(prefix)
        b.emit(ir.Assign(ir.Name(name), ir.CodeExpr(make)))
    return name
