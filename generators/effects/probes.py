"""Guard-probing call plans: an argument whose container length, dict key order, element type,
attribute value, float sign, tensor dtype or requires_grad changes from one call to the next, and a
global container grown between calls. Each call is compared with eager on the same state, so a
missing guard shows up as a stale result.
"""
from __future__ import annotations

from .. import ir
from ..builder import Builder, linspace
from ..choose import integer
from ..fragments import fragment
from .common import FAMILY, choice, holder_class, lit, read_into_output, stmt


def _plan(b: Builder, param, values: list[ir.Expr]) -> None:
    """Use `values[i]` for call `i + 1` and make sure the plan has that many calls."""
    for i, value in enumerate(values, start=1):
        param.per_call[i] = value
    b.calls = max(b.calls, len(values) + 1)


def _probe_length(draw, b: Builder) -> ir.Expr:
    name = b.fresh("seq")
    p = b.add_value_input(name, lit([1, 2, 3]))
    _plan(b, p, [lit([1, 2]), lit([4, 2, 3, 1])][: integer(draw, 1, 2)])
    return ir.BinOp(ir.call("sum", ir.Name(name)), "+", ir.call("len", ir.Name(name)))


def _probe_key_order(draw, b: Builder) -> ir.Expr:
    name = b.fresh("d")
    p = b.add_value_input(name, lit({"a": 1, "b": 2}))
    _plan(b, p, [draw(choice((lit({"b": 2, "a": 1}), lit({"a": 1, "c": 2}), lit({"a": 1}))))])
    return fold_keys(b, ir.Name(name))


def fold_keys(b: Builder, d: ir.Expr) -> ir.Expr:
    """Emit a loop folding `d`'s keys and values, in iteration order, into a small int; return it."""
    acc, k = b.fresh("acc"), b.fresh("k")
    b.emit(ir.Assign(ir.Name(acc), ir.Const(0)))
    step = ir.BinOp(ir.BinOp(ir.Name(acc), "*", ir.Const(3)), "+", ir.Sub(d, ir.Name(k)))
    bonus = ir.IfExp(ir.BinOp(ir.Name(k), "==", ir.Const("a")), ir.Const(5), ir.Const(0))
    b.emit(ir.For(ir.Name(k), d, (ir.Assign(ir.Name(acc), ir.BinOp(ir.BinOp(step, "+", bonus), "%", ir.Const(97))),)))
    return ir.Name(acc)


def _probe_elem_type(draw, b: Builder) -> ir.Expr:
    name = b.fresh("vals")
    p = b.add_value_input(name, lit([1, 2]))
    _plan(b, p, [draw(choice((lit([1.5, 2]), lit([True, 2]), lit([-1, 2])))), lit([2, 2])])
    first = ir.Sub(ir.Name(name), ir.Const(0))
    return ir.IfExp(ir.call("isinstance", first, ir.Name("float")), ir.BinOp(first, "*", ir.Const(2)), first)


def _probe_attr_value(draw, b: Builder) -> ir.Expr:
    make, name = holder_class(draw, b), b.fresh("hold")
    p = b.add_value_input(name, make(ir.Const(2)))
    _plan(b, p, [make(ir.Const(draw(choice((3, 2.5, -2)))))])
    return ir.Attr(ir.Name(name), "items")


def _probe_float_sign(draw, b: Builder) -> ir.Expr:
    b.add_import(ir.Import("math"))
    name = b.fresh("s")
    first = draw(choice((0.0, -0.0)))
    p = b.add_value_input(name, ir.Const(first))
    _plan(b, p, [ir.Const(-first)])
    return ir.call("math.copysign", ir.Const(1.0), ir.Name(name))


def _probe_int_value(draw, b: Builder) -> ir.Expr:
    name = b.fresh("n")
    p = b.add_value_input(name, ir.Const(2))
    _plan(b, p, [ir.Const(draw(choice((3, 0, -1)))), ir.Const(2)][: integer(draw, 1, 2)])
    return ir.BinOp(ir.Name(name), "*", ir.Const(2))


def _probe_between_global(draw, b: Builder) -> ir.Expr:
    g = b.fresh("GROW_").upper()
    b.add_global(g, lit([1]))
    b.between.append(stmt(ir.method(ir.Name(g), "append", ir.Name("call"))))
    b.calls = max(b.calls, draw(choice((2, 3))))
    return ir.BinOp(ir.call("len", ir.Name(g)), "+", ir.call("sum", ir.Name(g)))


def _probe_tensor(draw, b: Builder, what: str) -> None:
    """A tensor argument whose dtype (float64) or requires_grad changes on the second call."""
    name = b.fresh("y")
    p = b.add_value_input(name, linspace((3,), 0.5))
    y = ir.Name(name)
    if what == "dtype":
        _plan(b, p, [ir.method(linspace((3,), 0.5), "double")])
        flag = ir.BinOp(ir.Attr(y, "dtype"), "==", ir.dotted("torch.float64"))
    else:
        _plan(b, p, [linspace((3,), 0.5, requires_grad=True)])
        flag = ir.Attr(y, "requires_grad")
    out = b.fresh("e")
    base = ir.BinOp(ir.method(y, "sin"), "*", ir.Const(2))
    b.emit(ir.Assign(ir.Name(out), ir.IfExp(flag, ir.BinOp(base, "+", ir.Const(1)), base)))
    b.returns.append(ir.Name(out))


SCALAR_PROBES = {
    "length": _probe_length, "key-order": _probe_key_order, "elem-type": _probe_elem_type,
    "attr-value": _probe_attr_value, "float-sign": _probe_float_sign, "int-value": _probe_int_value,
    "between-global": _probe_between_global,
}


@fragment(FAMILY, "guard-probe", weight=6, nestable=False)
def call_plan_probe(draw, b: Builder) -> None:
    """Change between calls something compiled code may have specialised on, and read it in the region."""
    what = draw(choice((*SCALAR_PROBES, "dtype", "requires-grad")))
    if what in SCALAR_PROBES:
        read_into_output(draw, b, SCALAR_PROBES[what](draw, b))
    else:
        _probe_tensor(draw, b, what)
    b.tag(f"probe-{what}")
