"""Symbolic provenance: ints and floats that remember the sympy expression they were computed from.

A `SymInt` behaves as its concrete int everywhere (it subclasses int), so it can
flow into torch calls unchanged; the interpreter combines `expr`s on arithmetic
and records a relation guard whenever a comparison of symbolic values is decided.
"""
from __future__ import annotations

import operator
from typing import Any

import sympy


class SymInt(int):
    """An int with the sympy expression it was derived from."""

    expr: sympy.Expr

    def __new__(cls, value: int, expr: sympy.Expr) -> SymInt:
        obj = super().__new__(cls, value)
        obj.expr = expr
        return obj

    def __reduce__(self) -> tuple:
        """Copied and pickled with its expression (`copy.deepcopy` of a container holding a size)."""
        return (SymInt, (int(self), self.expr))


class SymFloat(float):
    """A float with the sympy expression it was derived from."""

    expr: sympy.Expr

    def __new__(cls, value: float, expr: sympy.Expr) -> SymFloat:
        obj = super().__new__(cls, value)
        obj.expr = expr
        return obj

    def __reduce__(self) -> tuple:
        """Copied and pickled with its expression (`copy.deepcopy` of a container holding a size)."""
        return (SymFloat, (float(self), self.expr))


def symbol(name: str, value: Any, positive: bool = False) -> Any:
    """A fresh symbol standing for `value` (int or float; bools stay plain)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return value
    if isinstance(value, int):
        return SymInt(value, sympy.Symbol(name, integer=True, nonnegative=positive or None))
    return SymFloat(value, sympy.Symbol(name, real=True))


def expr_of(v: Any) -> Any:
    if isinstance(v, (SymInt, SymFloat)):
        return v.expr
    if isinstance(v, bool):
        return sympy.Integer(int(v))
    if isinstance(v, int):
        return sympy.Integer(v)
    if isinstance(v, float):
        return sympy.Float(v)
    return None


def is_symbolic(v: Any) -> bool:
    return isinstance(v, (SymInt, SymFloat))


def plain(v: Any) -> Any:
    """Strip provenance (recursively through plain tuples)."""
    if type(v) is SymInt:
        return int(v)
    if type(v) is SymFloat:
        return float(v)
    if type(v) is tuple and any(type(x) in (SymInt, SymFloat, tuple, list) for x in v):
        return tuple(plain(x) for x in v)
    return v


_ARITH = {"Add": operator.add, "Sub": operator.sub, "Mult": operator.mul, "FloorDiv": None, "Mod": None,
          "Pow": operator.pow, "Div": operator.truediv}


def combine(op: str, a: Any, b: Any, result: Any) -> Any:
    """Attach the expression of `a op b` to the concrete `result` when an operand is symbolic."""
    if isinstance(result, bool) or not isinstance(result, (int, float)) or not (is_symbolic(a) or is_symbolic(b)):
        return result
    ea, eb = expr_of(a), expr_of(b)
    if ea is None or eb is None or op not in _ARITH:
        return result
    if op == "FloorDiv":
        e = sympy.floor(ea / eb)
    elif op == "Mod":
        e = sympy.Mod(ea, eb)
    else:
        e = _ARITH[op](ea, eb)
    return SymInt(result, e) if isinstance(result, int) else SymFloat(result, e)


def negate(v: Any) -> Any:
    if isinstance(v, SymInt):
        return SymInt(-int(v), -v.expr)
    if isinstance(v, SymFloat):
        return SymFloat(-float(v), -v.expr)
    return -v


_REL = {"Lt": sympy.Lt, "LtE": sympy.Le, "Gt": sympy.Gt, "GtE": sympy.Ge, "Eq": sympy.Eq, "NotEq": sympy.Ne}
_NOT = {"Lt": "GtE", "LtE": "Gt", "Gt": "LtE", "GtE": "Lt", "Eq": "NotEq", "NotEq": "Eq"}


def relation(op: str, a: Any, b: Any, outcome: bool) -> Any:
    """The sympy relation that held when `a op b` evaluated to `outcome` (None if not symbolic)."""
    if op not in _REL or not (is_symbolic(a) or is_symbolic(b)):
        return None
    ea, eb = expr_of(a), expr_of(b)
    if ea is None or eb is None:
        return None
    rel = _REL[op if outcome else _NOT[op]](ea, eb, evaluate=False)
    return rel
