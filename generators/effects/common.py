"""Shared helpers of the `effects` family: literals as IR, module-level classes, output reads.

Every effects fragment ends by folding what it mutated into a tensor the entry
returns (`read_into_output`), so a stale or dropped effect shows up in the
outputs as well as in the state snapshot.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from hypothesis import strategies as st

from .. import ir, tensor_ops
from ..builder import Builder, linspace
from ..choose import boolean, integer

FAMILY = "effects"


_CHOICES: dict[str, st.SearchStrategy] = {}


def choice(options: tuple) -> st.SearchStrategy:
    """`st.sampled_from(options)`, built and validated once per option tuple (drawing stays cheap).

    Keyed by `repr`, so `(2, 3)` and `(2.0, 3.0)`, or `0.0` and `-0.0`, get distinct strategies."""
    key = repr(options)
    strategy = _CHOICES.get(key)
    if strategy is None:
        strategy = _CHOICES[key] = st.sampled_from(options)
    return strategy


def lit(v: Any) -> ir.Expr:
    """A Python literal (nested lists, tuples, dicts, sets, scalars) as an IR expression."""
    if isinstance(v, list):
        return ir.ListExpr(tuple(lit(x) for x in v))
    if isinstance(v, tuple):
        return ir.TupleExpr(tuple(lit(x) for x in v))
    if isinstance(v, dict):
        return ir.DictExpr(tuple((lit(k), lit(x)) for k, x in v.items()))
    if isinstance(v, (set, frozenset)):
        return ir.SetExpr(tuple(lit(x) for x in sorted(v))) if v else ir.call("set")
    return ir.Const(v)


def stmt(expr: ir.Expr) -> ir.ExprStmt:
    return ir.ExprStmt(expr)


def guarded(test: ir.Expr, *body: ir.Stmt) -> ir.If:
    return ir.If(test, tuple(body))


def use_collections(b: Builder) -> None:
    b.add_import(ir.Import("collections"))


def holder_class(draw, b: Builder) -> Callable[[ir.Expr], ir.Expr]:
    """How to build an object holding one value as `.items`: a `types.SimpleNamespace`, or a
    module-level `class HolderN` whose `__init__` stores it."""
    if not boolean(draw):
        b.add_import(ir.Import("types"))
        return lambda value: ir.call("types.SimpleNamespace", items=value)
    cls = b.fresh("Holder")
    init = ir.Def("__init__", (ir.Param("self"), ir.Param("items")),
                  (ir.Assign(ir.Attr(ir.Name("self"), "items"), ir.Name("items")),))
    b.add_helper(ir.ClassDef(cls, (), (init,)))
    return lambda value: ir.call(cls, value)


def read_into_output(draw, b: Builder, scalar: ir.Expr) -> None:
    """Bind `t = x + scalar` over a visible tensor and return it, so the outputs depend on the effect."""
    var = tensor_ops.pick(draw, b)
    operand, bound = tensor_ops.squash(var)
    name = b.fresh("e")
    b.bind(name, ir.BinOp(operand, "+", scalar), var.shape, bound + 100.0)
    if b.scope is b.root:
        b.returns.append(ir.Name(name))


def small_int(draw) -> int:
    return integer(draw, 0, 5)


def grad_input(b: Builder, shape: tuple[int, ...] = (3,), offset: float = 0.25) -> ir.Name:
    """An extra entry parameter that is a leaf requiring grad, kept out of the shared tensor pool."""
    name = b.fresh("g")
    b.add_value_input(name, linspace(shape, offset, requires_grad=True))
    return ir.Name(name)
