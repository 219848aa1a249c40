"""Python semantics shared by the interpreter's visitors: operator tables, control-flow signals, small helpers."""
from __future__ import annotations

import ast
import operator
import types
from collections.abc import Callable
from typing import Any

import torch

BINOPS: dict[type, Callable] = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod, ast.Pow: operator.pow, ast.MatMult: operator.matmul,
    ast.BitAnd: operator.and_, ast.BitOr: operator.or_, ast.BitXor: operator.xor, ast.LShift: operator.lshift,
    ast.RShift: operator.rshift,
}
INPLACE: dict[type, Callable] = {
    ast.Add: operator.iadd, ast.Sub: operator.isub, ast.Mult: operator.imul, ast.Div: operator.itruediv,
    ast.FloorDiv: operator.ifloordiv, ast.Mod: operator.imod, ast.Pow: operator.ipow, ast.MatMult: operator.imatmul,
    ast.BitAnd: operator.iand, ast.BitOr: operator.ior, ast.BitXor: operator.ixor, ast.LShift: operator.ilshift,
    ast.RShift: operator.irshift,
}
COMPARE: dict[type, Callable] = {
    ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Lt: operator.lt, ast.LtE: operator.le, ast.Gt: operator.gt,
    ast.GtE: operator.ge, ast.Is: operator.is_, ast.IsNot: operator.is_not,
    ast.In: lambda a, b: a in b, ast.NotIn: lambda a, b: a not in b,
}
UNARY: dict[type, Callable] = {ast.USub: operator.neg, ast.UAdd: operator.pos, ast.Not: operator.not_,
                               ast.Invert: operator.invert}

class Return(BaseException):
    def __init__(self, value: Any) -> None:
        self.value = value


class Break(BaseException):
    pass


class Continue(BaseException):
    pass


def first_column(code: types.CodeType) -> int:
    for _, _, col, _ in code.co_positions():
        if col:
            return col
    return 0


def dotted(node: ast.expr) -> str | None:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return None


def tensorish(*values: Any) -> bool:
    return any(isinstance(v, torch.Tensor) for v in values)


def short(v: Any) -> str:
    if isinstance(v, torch.Tensor):
        return f"tensor{tuple(v.shape)}"
    text = repr(v) if not callable(v) else getattr(v, "__qualname__", type(v).__name__)
    return text if len(text) < 40 else text[:37] + "..."

