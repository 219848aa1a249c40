"""Objects and classes: container subclasses (plain and with overridden methods calling `super()`),
attribute writes, deletes and reads on existing and new objects, `__dict__` updates, properties,
class attributes changed between calls, and methods replaced on the instance or the class.
"""
from __future__ import annotations

from .. import ir
from ..builder import Builder
from ..choose import boolean, integer
from ..fragments import fragment
from .common import FAMILY, choice, guarded, lit, read_into_output, small_int, stmt

SELF = ir.Name("self")

# (base, overridden method, its parameters, the super() call's arguments)
_OVERRIDES = {
    "list": ("append", ("v",)),
    "dict": ("__setitem__", ("k", "v")),
    "set": ("add", ("v",)),
}


def _bump_self() -> ir.Assign:
    return ir.Assign(ir.Attr(SELF, "n"), ir.BinOp(ir.Attr(SELF, "n"), "+", ir.Const(1)))


def subclass_def(b: Builder, base: str, override: bool) -> str:
    """`class MyListN(list)` with a class-level counter `n`, optionally overriding one mutator."""
    cls = b.fresh(f"My{base.capitalize()}")
    body: list[ir.Stmt] = [ir.Assign(ir.Name("n"), ir.Const(0))]
    if override:
        meth, params = _OVERRIDES[base]
        sup = ir.method(ir.call("super"), meth, *(ir.Name(p) for p in params))
        body.append(ir.Def(meth, (ir.Param("self"), *(ir.Param(p) for p in params)), (_bump_self(), stmt(sup))))
    b.add_helper(ir.ClassDef(cls, (ir.Name(base),), tuple(body)))
    return cls


def _subclass_ops(draw, m: ir.Expr, base: str) -> list[ir.Stmt]:
    v = ir.Const(small_int(draw))
    k = ir.Const(draw(choice(("a", "b", "c"))))
    choices = {
        "list": [stmt(ir.method(m, "append", v)), stmt(ir.method(m, "extend", ir.ListExpr((v,)))),
                 guarded(m, ir.Assign(ir.Sub(m, ir.Const(0)), v)), guarded(m, stmt(ir.method(m, "pop")))],
        "dict": [ir.Assign(ir.Sub(m, k), v), stmt(ir.method(m, "update", ir.DictExpr(((k, v),)))),
                 stmt(ir.method(m, "setdefault", k, v)), stmt(ir.method(m, "pop", k, ir.Const(None)))],
        "set": [stmt(ir.method(m, "add", v)), stmt(ir.method(m, "discard", v)),
                stmt(ir.method(m, "update", ir.SetExpr((v,))))],
    }[base]
    return [choices[integer(draw, 0, len(choices) - 1)] for _ in range(integer(draw, 1, 3))]


@fragment(FAMILY, "subclass", weight=3)
def container_subclass(draw, b: Builder) -> None:
    """A user subclass of list/dict/set: passed in, global, or created here and returned or stored."""
    base = draw(choice(("list", "dict", "set")))
    override = boolean(draw)
    cls = subclass_def(b, base, override)
    init = {"list": lit([1, 2]), "dict": lit({"a": 1}), "set": lit({1, 2})}[base]
    where = draw(choice(("arg", "global", "new") if b.scope is b.root else ("global", "new")))
    if where == "arg":
        name = b.fresh("m")
        b.add_value_input(name, ir.call(cls, init))
    elif where == "global":
        name = b.fresh("M_").upper()
        b.add_global(name, ir.call(cls, init))
    else:
        name = b.fresh("m")
        b.emit(ir.Assign(ir.Name(name), ir.call(cls, init)))
    m = ir.Name(name)
    b.emit(*_subclass_ops(draw, m, base))
    read_into_output(draw, b, ir.BinOp(ir.call("len", m), "+", ir.Attr(m, "n")))
    if where == "new":
        if b.scope is b.root and boolean(draw):
            b.returns.append(m)
        else:
            sink = b.fresh("SINK_").upper()
            b.add_global(sink, ir.ListExpr(()))
            b.emit(stmt(ir.method(ir.Name(sink), "append", m)))
    b.tag(f"subclass-{base}", "subclass-override" if override else "subclass-plain")


def object_class(b: Builder, prop: bool) -> str:
    """`class ObjN` with attributes `a` and `b` set in `__init__`, and optionally a property `double`."""
    cls = b.fresh("Obj")
    init = ir.Def("__init__", (ir.Param("self"), ir.Param("a")), (
        ir.Assign(ir.Attr(SELF, "a"), ir.Name("a")), ir.Assign(ir.Attr(SELF, "b"), ir.Const(1))))
    body: list[ir.Stmt] = [init]
    if prop:
        body.append(ir.Def("double", (ir.Param("self"),), (ir.Return(ir.BinOp(ir.Attr(SELF, "a"), "*", ir.Const(2))),),
                           (ir.Name("property"),)))
    b.add_helper(ir.ClassDef(cls, (), tuple(body)))
    return cls


def _attr_action(draw, b: Builder, o: ir.Expr) -> tuple[list[ir.Stmt], str]:
    v = ir.Const(small_int(draw))
    kind = draw(choice(("write", "new-attr", "del", "dict-update", "setattr", "tensor-attr")))
    if kind == "write":
        return [ir.Assign(ir.Attr(o, "a"), ir.BinOp(ir.Attr(o, "a"), "+", v))], "attr-write"
    if kind == "new-attr":
        return [ir.Assign(ir.Attr(o, "c"), v)], "attr-write"
    if kind == "setattr":
        return [stmt(ir.call("setattr", o, ir.Const("d"), v))], "attr-write"
    if kind == "del":
        return [guarded(ir.call("hasattr", o, ir.Const("b")), ir.Del((ir.Attr(o, "b"),)))], "attr-del"
    if kind == "dict-update":
        return [stmt(ir.method(ir.Attr(o, "__dict__"), "update", ir.DictExpr(((ir.Const("e"), v),))))], "dict-update"
    var = b.scope.visible_tensors()[-1]
    return [ir.Assign(ir.Attr(o, "t"), ir.method(ir.call("torch.tanh", var.expr), "sum"))], "attr-write"


@fragment(FAMILY, "object-attr", weight=3)
def object_attrs(draw, b: Builder) -> None:
    """Attribute writes, deletes, `__dict__` updates and property reads on an existing or new object."""
    style = draw(choice(("namespace", "class", "property")))
    prop = style == "property"
    first = ir.Const(small_int(draw))
    if style == "namespace":
        b.add_import(ir.Import("types"))
        init = ir.call("types.SimpleNamespace", a=first, b=ir.Const(1))
    else:
        init = ir.call(object_class(b, prop), first)
    where = draw(choice(("arg", "global", "new") if b.scope is b.root else ("global", "new")))
    if where == "arg":
        name = b.fresh("ob")
        b.add_value_input(name, init)
    elif where == "global":
        name = b.fresh("OB_").upper()
        b.add_global(name, init)
    else:
        name = b.fresh("ob")
        b.emit(ir.Assign(ir.Name(name), init))
    o = ir.Name(name)
    tags = {f"object-{where}", f"object-{style}"}
    for _ in range(integer(draw, 1, 3)):
        stmts, tag = _attr_action(draw, b, o)
        b.emit(*stmts)
        tags.add(tag)
    read = ir.Attr(o, "double") if prop else ir.Attr(o, "a")
    read_into_output(draw, b, read)
    if prop:
        tags.add("property")
    if where == "new":
        if b.scope is b.root and boolean(draw):
            b.returns.append(o)
        else:
            holder = b.fresh("STORE_").upper()
            b.add_global(holder, ir.DictExpr(()))
            b.emit(ir.Assign(ir.Sub(ir.Name(holder), ir.Const("last")), o))
    b.tag(*tags)


@fragment(FAMILY, "class-attr", "guard-probe", weight=2, nestable=False)
def class_attr_change(draw, b: Builder) -> None:
    """A class attribute read in the region (via the class or an instance) and changed between calls."""
    cls = b.fresh("Cfg")
    write = boolean(draw)
    attrs = (("scale", 2), ("count", 0)) if write else (("scale", 2),)
    b.add_helper(ir.ClassDef(cls, (), tuple(ir.Assign(ir.Name(k), ir.Const(v)) for k, v in attrs)))
    via = draw(choice(("class", "instance")))
    if via == "class":
        owner: ir.Expr = ir.Name(cls)
    else:
        inst = b.fresh("CFG_").upper()
        b.add_global(inst, ir.call(cls))
        owner = ir.Name(inst)
    new = draw(choice((ir.BinOp(ir.Name("call"), "+", ir.Const(2)), ir.Const(-1.5), ir.Const(2.0))))
    b.between.append(ir.Assign(ir.Attr(ir.Name(cls), "scale"), new))
    if write:
        b.emit(ir.Assign(ir.Attr(ir.Name(cls), "count"), ir.BinOp(ir.Attr(ir.Name(cls), "count"), "+", ir.Const(1))))
        b.tag("class-attr-write")
    b.calls = max(b.calls, draw(choice((2, 3))))
    read_into_output(draw, b, ir.Attr(owner, "scale"))
    b.tag(f"class-attr-via-{via}")


@fragment(FAMILY, "method-replace", "guard-probe", weight=2, nestable=False)
def method_replace(draw, b: Builder) -> None:
    """A method called in the region, replaced between calls on the class (by swapping it with a sibling)
    or on a global instance (an instance attribute shadowing it, then deleted)."""
    cls, t = b.fresh("K"), ir.Name("t")
    params = (ir.Param("self"), ir.Param("t"))
    b.add_helper(ir.ClassDef(cls, (), (ir.Def("m", params, (ir.Return(ir.BinOp(t, "*", ir.Const(2))),)),
                                       ir.Def("alt", params, (ir.Return(ir.BinOp(t, "+", ir.Const(1))),)))))
    on = draw(choice(("class", "instance")))
    if on == "class":
        receiver: ir.Expr = ir.call(ir.Name(cls))
        pair = ir.TupleExpr((ir.Attr(ir.Name(cls), "m"), ir.Attr(ir.Name(cls), "alt")))
        b.between.append(ir.Assign(pair, ir.TupleExpr(tuple(reversed(pair.elts)))))
    else:
        inst = b.fresh("KOBJ_").upper()
        b.add_global(inst, ir.call(cls))
        receiver = ir.Name(inst)
        shadowed = ir.BinOp(ir.Const("m"), "in", ir.call("vars", receiver))
        b.between.append(ir.If(ir.BinOp(ir.Name("call"), "==", ir.Const(1)),
                               (ir.Assign(ir.Attr(receiver, "m"), ir.Lambda(("t",), ir.BinOp(t, "-", ir.Const(1)))),),
                               (guarded(shadowed, ir.Del((ir.Attr(receiver, "m"),))),)))
    b.calls = max(b.calls, draw(choice((2, 3))))
    var = b.scope.visible_tensors()[-1]
    name = b.fresh("e")
    b.bind(name, ir.method(receiver, "m", ir.call("torch.tanh", var.expr)), var.shape, 2.0)
    b.returns.append(ir.Name(name))
    b.tag(f"method-replace-{on}")
