"""Closures fragments about state that exists before compilation: module-level factories and the
closures they made, closures passed in as arguments, globals, and an entry function that is itself
made by a factory, so it shares cells with helpers (seed 000's "cells captured by both the root
frame and a pre-existing function"). These also carry the call plans that change, between calls,
a captured cell, a global the program reads, or the closure passed in."""
from __future__ import annotations

import weakref
from dataclasses import dataclass, field

from .. import ir
from ..builder import ENTRY_SLOT, Builder
from ..choose import boolean, choose, integer
from ..fragments import fragment
from .cells import (
    FAMILY,
    Cell,
    init,
    log_between_call,
    mean_of,
    new_cell,
    operand,
    read,
    store_escaped,
    tanh,
    total,
    with_nonlocal,
    write,
)


def module_factory(draw, b) -> tuple[str, str, str, Cell]:
    """`def make(k)` at module level returning `(closure, setter)` over one cell, and `PC, SET = make(..)`
    run at import, i.e. before compilation. Returns (factory, closure global, setter global, cell)."""
    maker, pc, setter = b.fresh("make_pc"), b.fresh("PC"), b.fresh("SET_PC")
    cell = new_cell(draw, b, "pn")
    stmts, rebinds = write(draw, cell, mean_of("t"))
    closure_body = [*stmts, ir.Return(tanh(total(ir.BinOp(ir.Name("t"), "*", ir.Name("k")), read(cell))))]
    b.add_helper(ir.Def(maker, (ir.Param("k"),), (
        ir.Assign(cell.expr, init(cell.kind)),
        ir.Def("closure", (ir.Param("t"),), with_nonlocal([cell.name] if rebinds else [], closure_body)),
        ir.Def("setter", (ir.Param("v"),), (ir.Nonlocal((cell.name,)), ir.Assign(cell.expr, ir.Name("v")))),
        ir.Return(ir.TupleExpr((ir.Name("closure"), ir.Name("setter")))),
    )))
    b.module.append(ir.Assign(ir.TupleExpr((ir.Name(pc), ir.Name(setter))),
                              ir.call(ir.Name(maker), ir.Const(choose(draw, (0.5, 2.0))))))
    return maker, pc, setter, cell


def change_cell_between(b, setter: str, cell: Cell) -> None:
    """Call plan: before a later call, overwrite the pre-existing closure's cell through its setter."""
    b.between.append(ir.ExprStmt(ir.call(ir.Name(setter), init(cell.kind))))
    b.tag("plan-cell")


@fragment(FAMILY, "preexisting-closure", weight=2, nestable=False)
def preexisting_call(draw, b) -> None:
    """A closure made by a module-level factory before compilation, reached from the compiled region
    through a global, or a global list, dict or object attribute, and called there."""
    _, pc, setter, cell = module_factory(draw, b)
    x, shape = operand(draw, b)
    where = choose(draw, ("global", "list", "dict", "attr"))
    fn: ir.Expr = ir.Name(pc)
    if where != "global":
        holder = b.fresh("HOLD")
        if where == "list":
            b.add_global(holder, ir.ListExpr((fn,)))
            fn = ir.Sub(ir.Name(holder), ir.Const(0))
        elif where == "dict":
            b.add_global(holder, ir.DictExpr(((ir.Const("fn"), fn),)))
            fn = ir.Sub(ir.Name(holder), ir.Const("fn"))
        else:
            box = b.fresh("Box")
            b.add_helper(ir.ClassDef(box, (), ()))
            b.add_global(holder, ir.call(ir.Name(box)))
            b.module.append(ir.Assign(ir.Attr(ir.Name(holder), "fn"), fn))
            fn = ir.Attr(ir.Name(holder), "fn")
        b.tag("closure-container")
    for _ in range(integer(draw, 1, 2)):
        b.bind(b.fresh("t"), ir.Call(fn, (x,)), shape, 1.0)
    if where != "global" and boolean(draw):
        # The same closure reached by a second path: one cell seen through two differently-sourced handles.
        b.bind(b.fresh("t"), ir.call(ir.Name(pc), x), shape, 1.0)
    if boolean(draw):
        change_cell_between(b, setter, cell)


@fragment(FAMILY, "preexisting-closure", "closure-arg", nestable=False)
def closure_argument(draw, b) -> None:
    """A pre-existing closure passed in as an argument of the entry; the call plan may pass a different
    closure (a fresh one from the same factory) on the second call and the original again on the third."""
    maker, pc, setter, cell = module_factory(draw, b)
    x, shape = operand(draw, b)
    param = b.add_value_input(b.fresh("fn"), ir.Name(pc))
    b.bind(b.fresh("t"), ir.call(ir.Name(param.name), x), shape, 1.0)
    if integer(draw, 0, 4) >= 2:
        fresh_closure = ir.Sub(ir.call(ir.Name(maker), ir.Const(choose(draw, (-1.0, 3.0)))), ir.Const(0))
        param.per_call[1] = fresh_closure
        b.calls = max(b.calls, 3)
        b.tag("plan-closure-swap")
    elif boolean(draw):
        change_cell_between(b, setter, cell)


@fragment(FAMILY, "global-rw", nestable=False)
def global_rw(draw, b) -> None:
    """A global read and written (rebound or mutated) by a closure 1-2 levels deep, then read by the
    entry; the call plan may rebind the global between calls (a guard must notice)."""
    g = Cell(b.fresh("GV"), choose(draw, ("int", "float", "tensor", "list", "dict")))
    b.add_global(g.name, init(g.kind))
    x, shape = operand(draw, b)
    stmts, _ = write(draw, g, mean_of("t"))
    fn = b.fresh("gw")
    body: tuple[ir.Stmt, ...] = (ir.Global((g.name,)), *stmts, ir.Return(tanh(total(ir.Name("t"), read(g)))))
    if boolean(draw):
        inner = b.fresh("gw")
        body = (ir.Def(inner, (ir.Param("t"),), body), ir.Return(ir.call(ir.Name(inner), ir.Name("t"))))
    b.emit(ir.Def(fn, (ir.Param("t"),), body))
    r = b.bind(b.fresh("t"), ir.call(ir.Name(fn), x), shape, 1.0)
    b.bind(b.fresh("t"), tanh(total(r.expr, read(g))), shape, 1.0)
    if boolean(draw):
        b.between += [ir.Global((g.name,)), ir.Assign(g.expr, init(g.kind))]
        b.tag("plan-global")


# ---- the entry made by a factory -------------------------------------------------------------


@dataclass
class EntryFactory:
    """`def make_f(): global H; <cells>; <helpers>; def f(...): ...; H = helper; return f` and
    `f = make_f()`: helpers are reached by the entry through cells and by `between` through globals."""

    name: str
    stmts: list[ir.Stmt] = field(default_factory=list)
    exports: list[str] = field(default_factory=list)
    assign: ir.Stmt | None = None


_FACTORIES: weakref.WeakKeyDictionary[Builder, EntryFactory] = weakref.WeakKeyDictionary()


def entry_factory(b: Builder) -> EntryFactory:
    if b not in _FACTORIES:
        _FACTORIES[b] = EntryFactory(b.fresh("make_" + b.entry))
    return _FACTORIES[b]


def exported(helper: str) -> str:
    """The module-level name a factory helper is published under."""
    return helper.upper()


def publish(b: Builder, fac: EntryFactory) -> None:
    """Write the factory into the builder: the entry goes where `ENTRY_SLOT` is (see `place_entry`)."""
    names = tuple(exported(h) for h in fac.exports)
    b.entry_factory = ir.Def(fac.name, (), (
        *((ir.Global(names),) if names else ()), *fac.stmts, ENTRY_SLOT,
        *(ir.Assign(ir.Name(exported(h)), ir.Name(h)) for h in fac.exports),
        ir.Return(ir.Name(b.entry)),
    ))
    if fac.assign is None:
        fac.assign = ir.Assign(ir.Name(b.entry), ir.call(ir.Name(fac.name)))
        b.after_entry.append(fac.assign)


@fragment(FAMILY, "shared-root-cell", nestable=False)
def shared_root_cell(draw, b) -> None:
    """The entry and a helper are made by one factory and share a cell: the helper (pre-existing, called
    in the region) writes it; the entry reads it, may rebind it, and may make a new closure over it."""
    fac = entry_factory(b)
    shared = new_cell(draw, b, "sc")
    helper = b.fresh("hp")
    stmts, rebinds = write(draw, shared, mean_of("t"))
    fac.stmts += [
        ir.Assign(shared.expr, init(shared.kind)),
        ir.Def(helper, (ir.Param("t"),), with_nonlocal([shared.name] if rebinds else [], [
            *stmts, ir.Return(tanh(total(ir.Name("t"), read(shared))))])),
    ]
    fac.exports.append(helper)
    publish(b, fac)
    x, shape = operand(draw, b)
    r = b.bind(b.fresh("t"), ir.call(ir.Name(helper), x), shape, 1.0)
    if boolean(draw):
        own_write, own_rebinds = write(draw, shared, ir.Const(0.5))
        if own_rebinds:
            b.declare("nonlocal", shared.name)
        b.emit(*own_write)
    if boolean(draw):
        inner = b.fresh("in")
        inner_write, inner_rebinds = write(draw, shared, mean_of("t"))
        b.emit(ir.Def(inner, (ir.Param("t"),), with_nonlocal([shared.name] if inner_rebinds else [], [
            *inner_write, ir.Return(tanh(total(ir.Name("t"), read(shared))))])))
        r = b.bind(b.fresh("t"), ir.call(ir.Name(inner), r.expr), shape, 1.0)
    b.bind(b.fresh("t"), tanh(total(r.expr, read(shared))), shape, 1.0)
    if boolean(draw):
        b.between.append(ir.ExprStmt(ir.call(ir.Name(exported(helper)), ir.call("torch.ones", ir.Const(1)))))
        b.tag("plan-cell")


@fragment(FAMILY, "creates-nested", nestable=False)
def creates_nested(draw, b) -> None:
    """A pre-existing function, called in the region, that creates and returns a closure capturing its
    own cells and a cell the entry also captures; the closure is used and usually escapes."""
    fac = entry_factory(b)
    shared = new_cell(draw, b, "sc")
    own = new_cell(draw, b, "w")
    maker, inner = b.fresh("mk"), b.fresh("inner")
    stmts, rebinds = write(draw, own, ir.Const(0.25))
    inner_body = [*stmts, ir.Return(total(ir.BinOp(ir.Name("t"), "*", ir.Name("k")), read(own), read(shared)))]
    fac.stmts += [
        ir.Assign(shared.expr, init(shared.kind)),
        ir.Def(maker, (ir.Param("k"),), (
            ir.Assign(own.expr, init(own.kind, ir.Name("k"))),
            ir.Def(inner, (ir.Param("t"),), with_nonlocal([own.name] if rebinds else [], inner_body)),
            ir.Return(ir.Name(inner)),
        )),
    ]
    fac.exports.append(maker)
    publish(b, fac)
    x, shape = operand(draw, b)
    if boolean(draw):
        root_write, root_rebinds = write(draw, shared, ir.Const(0.5))
        if root_rebinds:
            b.declare("nonlocal", shared.name)
        b.emit(*root_write)
    made = b.fresh("g")
    b.emit(ir.Assign(ir.Name(made), ir.call(ir.Name(maker), ir.call("torch.tensor", ir.Const(0.5)))))
    b.bind(b.fresh("t"), tanh(ir.call(ir.Name(made), x)), shape, 1.0)
    b.bind(b.fresh("t"), tanh(total(x, read(shared))), shape, 1.0)
    if integer(draw, 0, 3) > 0:
        if boolean(draw):
            b.returns.append(ir.Name(made))
        log_between_call(b, store_escaped(draw, b, ir.Name(made)), ir.Const(0.25))
        b.tag("escaping-closure")
