"""Effects on what the caller passed in: in-place operators on container arguments (`inplace-arg`), and a
container subclass whose overridden method calls `super()`, compiled with `fullgraph=True`
(`subclass-super-fullgraph`).

`inplace-arg`: `s |= {...}` on a set argument, `l *= 2` or `l += [...]` on a list argument, `d |= {...}` on a
dict argument, `&=`, `-=`, `^=` on sets, `+=` on a bytearray or deque: the operator mutates the caller's
object, which a compiler must replay after the graph. The container fragment draws each operator and each
place, but one pairing in about 400; torch 2.5 lost exactly these (it modelled the in-place operator as a new
object bound to the parameter's name). The argument may also be reached through an attribute of an argument
object, and read back through a second name bound before the operator.

`subclass-super-fullgraph`: a list, dict or set subclass (module level) overriding a mutator that counts its
calls and calls `super()`, used as an argument, a global or an object created in the frame, under
`fullgraph=True`; torch 2.5 refused both the call through `super()` and the creation of the instance there.
"""
from __future__ import annotations

from .. import ir
from ..builder import Builder
from ..choose import boolean, choose, integer
from ..fragments import fragment
from .common import FAMILY, holder_class, lit, read_into_output, stmt
from .objects import _subclass_ops, subclass_def

INPLACE = "inplace-arg"
SUPER = "subclass-super-fullgraph"

# kind -> (initial value, [(operator, operand)]): every operator keeps the container small and valid
_OPERATORS: dict[str, tuple[ir.Expr, list[tuple[str, ir.Expr]]]] = {
    "set": (lit({1, 2}), [("|", lit({2, 5})), ("&", lit({1, 3})), ("-", lit({2})), ("^", lit({1, 4}))]),
    "list": (lit([1, 2]), [("*", ir.Const(2)), ("+", lit([3])), ("*", ir.Const(0)),
                           ("+", ir.call("range", ir.Const(2)))]),
    "dict": (lit({"a": 1}), [("|", lit({"b": 2})), ("|", lit({"a": 5}))]),
    "bytearray": (ir.call("bytearray", ir.Const(b"\x01\x02")), [("+", ir.Const(b"\x03")), ("*", ir.Const(2))]),
    "deque": (ir.call("collections.deque", lit([1, 2])), [("+", lit([4])), ("*", ir.Const(2))]),
}
KINDS = ("set", "list", "dict", "set", "list", "dict", "bytearray", "deque")  # the three first


def _read(c: ir.Expr, kind: str) -> ir.Expr:
    if kind == "dict":
        return ir.BinOp(ir.call("sum", ir.method(c, "values")), "+", ir.call("len", c))
    return ir.BinOp(ir.BinOp(ir.call("sum", c), "%", ir.Const(97)), "+", ir.call("len", c))


@fragment(FAMILY, INPLACE, weight=3, nestable=False)
def inplace_argument(draw, b: Builder) -> None:
    """One or two in-place operators on a container the caller passed (or an attribute of an argument)."""
    kind = choose(draw, KINDS)
    if kind == "deque":
        b.add_import(ir.Import("collections"))
    init, ops = _OPERATORS[kind]
    name = b.fresh("a")
    via = choose(draw, ("arg", "arg", "arg", "attr"))
    if via == "arg":
        b.add_value_input(name, init)
        target: ir.Expr = ir.Name(name)
    else:
        b.add_value_input(name, holder_class(draw, b)(init))
        target = ir.Attr(ir.Name(name), "items")
    alias = None
    if boolean(draw):  # a second name for the same object, bound before the operator
        alias = ir.Name(b.fresh("same"))
        b.emit(ir.Assign(alias, target))
    used = []
    for _ in range(integer(draw, 1, 2)):
        op, operand = choose(draw, ops)
        b.emit(ir.AugAssign(target, op, operand))
        used.append(op)
    read_into_output(draw, b, _read(alias if alias is not None else target, kind))
    b.tag(f"inplace-{kind}", f"inplace-via-{via}", *(f"inplace-op-{'or' if o == '|' else o}" for o in used))
    if alias is not None:
        b.tag("inplace-alias")


@fragment(FAMILY, SUPER, weight=1, nestable=False)
def subclass_super_fullgraph(draw, b: Builder) -> None:
    """A container subclass's overridden mutator calling `super()`, under `fullgraph=True`."""
    base = choose(draw, ("list", "dict", "set"))
    cls = subclass_def(b, base, override=True)
    init = {"list": lit([1, 2]), "dict": lit({"a": 1}), "set": lit({1, 2})}[base]
    where = choose(draw, ("arg", "global", "new"))
    name = b.fresh("m")
    if where == "arg":
        b.add_value_input(name, ir.call(cls, init))
    elif where == "global":
        name = name.upper()
        b.add_global(name, ir.call(cls, init))
    else:
        b.emit(ir.Assign(ir.Name(name), ir.call(cls, init)))
    m = ir.Name(name)
    if boolean(draw):
        b.emit(*_subclass_ops(draw, m, base))
    b.emit(ir.Assign(ir.Sub(m, ir.Const("z")), ir.Const(3)) if base == "dict" else
           stmt(ir.method(m, "append" if base == "list" else "add", ir.Const(3))))
    read_into_output(draw, b, ir.BinOp(ir.call("len", m), "+", ir.Attr(m, "n")))
    if where == "new":
        b.returns.append(m)
    b.compile_options["fullgraph"] = True
    b.tag("fullgraph", f"super-{base}", f"super-where-{where}")
