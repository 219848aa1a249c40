"""Aliasing and tensors held by containers: one container reachable through two names (two globals,
two arguments, an argument stored in a global, a global and a closure cell), and tensors kept as
container elements or object attributes, mutated in place.
"""
from __future__ import annotations

from .. import ir, tensor_ops
from ..builder import Builder
from ..fragments import fragment
from .common import FAMILY, choice, holder_class, lit, read_into_output, small_int, stmt


def _len_plus_sum(c: ir.Expr) -> ir.Expr:
    return ir.BinOp(ir.call("len", c), "+", ir.BinOp(ir.call("sum", c), "%", ir.Const(97)))


@fragment(FAMILY, "aliasing", weight=3, nestable=False)
def aliasing(draw, b: Builder) -> None:
    """Mutate a list through one name and read it through another."""
    v = ir.Const(small_int(draw))
    kind = draw(choice(("globals", "args", "arg-global", "global-cell")))
    if kind == "globals":
        first, second = b.fresh("LA_").upper(), b.fresh("LB_").upper()
        b.add_global(first, lit([1, 2]))
        b.add_global(second, ir.Name(first))
        b.emit(stmt(ir.method(ir.Name(second), "append", v)))
        read = ir.Name(first)
    elif kind == "args":
        first, second = b.fresh("la"), b.fresh("lb")
        b.add_value_input(first, lit([1, 2]))
        b.add_value_input(second, ir.Name(first))
        b.emit(stmt(ir.method(ir.Name(second), "insert", ir.Const(0), v)))
        read = ir.Name(first)
    elif kind == "arg-global":
        arg, store = b.fresh("la"), b.fresh("KEEP_").upper()
        b.add_value_input(arg, lit([3]))
        b.add_global(store, lit([]))
        b.emit(stmt(ir.method(ir.Name(store), "append", ir.Name(arg))),
               stmt(ir.method(ir.Name(arg), "append", v)))
        read = ir.Sub(ir.Name(store), ir.Const(-1))
    else:
        read = _global_and_cell(b, v)
    read_into_output(draw, b, _len_plus_sum(read))
    b.tag(f"alias-{kind}")


def _global_and_cell(b: Builder, v: ir.Expr) -> ir.Expr:
    """`PUSH, STORE = make()`: a module-level closure whose cell is also a global; push via the closure."""
    make, push, store, push_g = b.fresh("make_store"), b.fresh("push"), b.fresh("STORE_").upper(), b.fresh("PUSH_")
    push_g = push_g.upper()
    inner = ir.Def(push, (ir.Param("v"),), (stmt(ir.method(ir.Name("store"), "append", ir.Name("v"))),
                                            ir.Return(ir.call("len", ir.Name("store")))))
    body = (ir.Assign(ir.Name("store"), lit([0])), inner, ir.Return(ir.TupleExpr((ir.Name(push), ir.Name("store")))))
    b.add_helper(ir.Def(make, (), body))
    b.add_helper(ir.Assign(ir.TupleExpr((ir.Name(push_g), ir.Name(store))), ir.call(ir.Name(make))))
    b.emit(stmt(ir.call(ir.Name(push_g), v)))
    return ir.Name(store)


@fragment(FAMILY, "tensor-element", weight=3, nestable=False)
def tensor_elements(draw, b: Builder) -> None:
    """Tensors held in a list, a dict or an object attribute, mutated in place inside the region."""
    src = tensor_ops.pick(draw, b)
    scale = ir.method(ir.call("torch.tanh", src.expr), "mean")
    fresh = ir.call("torch.ones", ir.Const(3), device=ir.Name("device"))
    holder = draw(choice(("list", "dict", "object")))
    where = draw(choice(("arg", "global")))
    if where == "global":
        fresh = ir.call("torch.ones", ir.Const(3))
        scale = ir.Const(0.5)
    init = {"list": ir.ListExpr((fresh, ir.method(fresh, "neg"))),
            "dict": ir.DictExpr(((ir.Const("w"), fresh),)),
            "object": None}[holder]
    if holder == "object":
        init = holder_class(draw, b)(fresh)
    name = b.fresh("tc") if where == "arg" else b.fresh("TC_").upper()
    if where == "arg":
        b.add_value_input(name, init)
    else:
        b.add_global(name, init)
    elem = {"list": ir.Sub(ir.Name(name), ir.Const(0)), "dict": ir.Sub(ir.Name(name), ir.Const("w")),
            "object": ir.Attr(ir.Name(name), "items")}[holder]
    op = draw(choice(("add_", "mul_", "index", "copy_")))
    if op == "add_":
        b.emit(stmt(ir.method(elem, "add_", scale)))
    elif op == "mul_":
        b.emit(stmt(ir.method(elem, "mul_", ir.Const(0.5))))
    elif op == "index":
        b.emit(ir.Assign(ir.Sub(elem, ir.Const(1)), scale))
    else:
        b.emit(stmt(ir.method(elem, "copy_", ir.method(ir.method(elem, "sin"), "clone"))))
    read_into_output(draw, b, ir.method(elem, "sum"))
    b.tag(f"tensor-in-{holder}", f"tensor-{where}")
