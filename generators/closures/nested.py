"""The `closures` family: nested functions, cells, name shadowing, escaping closures, graph breaks.

Seed 000 lists the ways Dynamo has modelled cells wrongly: cells of the root
frame, cells of pre-existing closures, both at once, names shadowed across
parent and child frames, closures that escape the compiled region. Each
fragment here builds one of those situations, valid by construction (see
`cells` for the values cells hold). Module-level and pre-existing
closures live in `preexisting`, lambdas, defaults, partials,
recursion and classes in `callables`, cells that agree in name or
contents in `agree`; importing this module registers them all.
"""
from __future__ import annotations

from .. import ir, tensor_ops  # noqa: F401  (the family's other fragments)
from ..choose import boolean, choose, integer
from ..fragments import fragment
from . import callables, preexisting  # noqa: F401  (the family's other fragments)
from .cells import (
    FAMILY,
    KINDS,
    MUTABLE,
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

GRAPH_BREAK = ir.ExprStmt(ir.call("torch._dynamo.graph_break"))


@fragment(FAMILY, "nested-closure", "nonlocal-write", weight=2)
def nested_closures(draw, b) -> None:
    """Functions nested 1-4 deep inside the entry; each level may own a cell and read or rebind any
    ancestor's; the innermost level always rebinds one through `nonlocal`."""
    depth = integer(draw, 1, 4)
    x, shape = operand(draw, b)
    root = new_cell(draw, b)
    b.emit(ir.Assign(root.expr, init(root.kind, x)))
    fn = _level(draw, b, 1, depth, [root])
    b.emit(fn)
    for _ in range(integer(draw, 1, 2)):
        b.bind(b.fresh("t"), ir.call(ir.Name(fn.name), x), shape, 1.0)
    b.returns.append(root.expr)
    if depth >= 2:
        b.tag("nonlocal-deep")


def _level(draw, b, level: int, depth: int, visible: list[Cell]) -> ir.Def:
    name = b.fresh("n")
    innermost = level == depth
    body: list[ir.Stmt] = []
    nonlocals: list[str] = []
    written = None
    if innermost or boolean(draw):
        written = choose(draw, visible)
        stmts, rebinds = write(draw, written, mean_of("t"), "rebind" if innermost else None)
        body += stmts
        nonlocals += [written.name] if rebinds else []
    if innermost:
        reads = [read(written)] + [read(c) for c in visible if c is not written and boolean(draw)]
        body.append(ir.Return(tanh(total(ir.Name("t"), *reads))))
        return ir.Def(name, (ir.Param("t"),), with_nonlocal(nonlocals, body))
    own = new_cell(draw, b) if boolean(draw) else None
    if own is not None:
        body.append(ir.Assign(own.expr, init(own.kind, ir.Name("t"))))
    inner = _level(draw, b, level + 1, depth, visible + ([own] if own else []))
    body.append(inner)
    result: ir.Expr = ir.call(ir.Name(inner.name), ir.Name("t"))
    read_now = [c for c in visible + ([own] if own else []) if boolean(draw)]
    if read_now and boolean(draw):
        nonlocals += [c.name for c in read_now if c is not own]
    body.append(ir.Return(tanh(total(result, *map(read, read_now))) if read_now else result))
    return ir.Def(name, (ir.Param("t"),), with_nonlocal(nonlocals, body))


@fragment(FAMILY, "shadowing", nestable=False)
def shadowing(draw, b) -> None:
    """One identifier bound as a global, a parameter (a cell read by its child), a local rebound by a
    child through `nonlocal`, and read as a free variable, at different levels of one program."""
    s = b.fresh("s")
    x, shape = operand(draw, b)
    b.add_global(s, ir.Const(1.5))
    sname, t = ir.Name(s), ir.Name("t")
    reader, param_fn, param_inner, local_fn, local_inner = (b.fresh(p) for p in ("sg", "sp", "sq", "sl", "sm"))
    read_global: list[ir.Stmt] = [ir.Return(tanh(ir.BinOp(t, "*", sname)))]
    if boolean(draw):
        read_global = [ir.Global((s,)), ir.Assign(sname, ir.BinOp(ir.BinOp(sname, "*", ir.Const(0.5)), "+",
                                                                  ir.Const(1.0))), *read_global]
        b.tag("global-rw")
    b.emit(
        ir.Def(reader, (ir.Param("t"),), tuple(read_global)),
        ir.Def(param_fn, (ir.Param(s),), (
            ir.Def(param_inner, (ir.Param("t"),), (ir.Return(tanh(ir.BinOp(t, "+", sname))),)),
            ir.Return(ir.Name(param_inner)),
        )),
        ir.Def(local_fn, (ir.Param("t"),), (
            ir.Assign(sname, ir.method(t, "mean")),
            ir.Def(local_inner, (), (ir.Nonlocal((s,)), ir.Assign(sname, ir.BinOp(sname, "*", ir.Const(0.5))))),
            ir.ExprStmt(ir.call(ir.Name(local_inner))),
            ir.Return(tanh(ir.BinOp(t, "-", sname))),
        )),
    )
    r1 = b.bind(b.fresh("t"), ir.call(ir.Name(reader), x), shape, 1.0)
    q = ir.call(ir.Name(param_fn), ir.Const(choose(draw, (0.5, -1.0))))
    r2 = b.bind(b.fresh("t"), ir.Call(q, (r1.expr,)), shape, 1.0)
    b.bind(b.fresh("t"), ir.call(ir.Name(local_fn), r2.expr), shape, 1.0)


@fragment(FAMILY, "shadow-cell", nestable=False)
def shadow_cell(draw, b) -> None:
    """A child's local shadows the parent's cell of the same name, and a grandchild rebinds the child's
    one through `nonlocal` (the parent's cell must stay untouched)."""
    x, shape = operand(draw, b)
    outer = new_cell(draw, b)
    inner = Cell(outer.name, choose(draw, KINDS))
    b.emit(ir.Assign(outer.expr, init(outer.kind, x)))
    reader, shadower, writer = b.fresh("rd"), b.fresh("sh"), b.fresh("wr")
    stmts, _ = write(draw, inner, mean_of("t"), "rebind")
    b.emit(
        ir.Def(reader, (ir.Param("t"),), (ir.Return(tanh(total(ir.Name("t"), read(outer)))),)),
        ir.Def(shadower, (ir.Param("t"),), (
            ir.Assign(inner.expr, init(inner.kind, ir.Name("t"))),
            ir.Def(writer, (ir.Param("t"),), (ir.Nonlocal((inner.name,)), *stmts, ir.Return(ir.Name("t")))),
            ir.ExprStmt(ir.call(ir.Name(writer), ir.Name("t"))),
            ir.Return(tanh(total(ir.Name("t"), read(inner)))),
        )),
    )
    r = b.bind(b.fresh("t"), ir.call(ir.Name(shadower), x), shape, 1.0)
    if boolean(draw):
        outer_write, _ = write(draw, outer, ir.Const(0.5), "rebind")
        bump = b.fresh("wr")
        b.emit(ir.Def(bump, (), (ir.Nonlocal((outer.name,)), *outer_write)), ir.ExprStmt(ir.call(ir.Name(bump))))
    b.bind(b.fresh("t"), ir.call(ir.Name(reader), r.expr), shape, 1.0)
    b.returns.append(outer.expr)


@fragment(FAMILY, "sibling-cells", nestable=False)
def sibling_cells(draw, b) -> None:
    """Two closures capturing different cells that have the same name: from one maker called twice, or
    from two sibling makers."""
    x, shape = operand(draw, b)
    k = b.fresh("k")
    makers = [b.fresh("mk")] if boolean(draw) else [b.fresh("mk"), b.fresh("mk")]
    for maker in makers:
        cell = Cell(k, choose(draw, KINDS))
        getter = b.fresh("get")
        stmts, rebinds = write(draw, cell, ir.Const(0.25))
        b.emit(ir.Def(maker, (ir.Param("t"),), (
            ir.Assign(cell.expr, init(cell.kind, ir.Name("t"))),
            ir.Def(getter, (), with_nonlocal([k] if rebinds else [], [*stmts, ir.Return(read(cell))])),
            ir.Return(ir.Name(getter)),
        )))
    first, second = b.fresh("g"), b.fresh("g")
    b.emit(ir.Assign(ir.Name(first), ir.call(ir.Name(makers[0]), x)),
           ir.Assign(ir.Name(second), ir.call(ir.Name(makers[-1]), ir.BinOp(x, "*", ir.Const(0.5)))))
    calls = [ir.call(ir.Name(g)) for g in (first, second, first)]
    b.bind(b.fresh("t"), tanh(total(x, *calls)), shape, 1.0)
    b.returns.append(ir.Name(second))


@fragment(FAMILY, "cell-kinds", "cell-inplace", nestable=False)
def cell_kinds(draw, b) -> None:
    """Cells holding tensors, ints, floats, lists, dicts and closures, rebound and mutated in place by a
    closure that is called once or twice; the first cell is always mutated in place."""
    x, shape = operand(draw, b)
    cells = [new_cell(draw, b, only=MUTABLE)]
    cells += [new_cell(draw, b) for _ in range(integer(draw, 0, 2))]
    for c in cells:
        b.emit(ir.Assign(c.expr, init(c.kind, x)))
    body: list[ir.Stmt] = []
    nonlocals: list[str] = []
    for i, c in enumerate(cells):
        stmts, rebinds = write(draw, c, mean_of("t"), "mutate" if i == 0 else None)
        body += stmts
        nonlocals += [c.name] if rebinds else []
    body.append(ir.Return(tanh(total(ir.Name("t"), *map(read, cells)))))
    fn = b.fresh("mut")
    b.emit(ir.Def(fn, (ir.Param("t"),), with_nonlocal(nonlocals, body)))
    for _ in range(integer(draw, 1, 2)):
        b.bind(b.fresh("t"), ir.call(ir.Name(fn), x), shape, 1.0)
    b.returns.extend(c.expr for c in cells)


@fragment(FAMILY, "graph-break-cell", nestable=False)
def graph_break_cell(draw, b) -> None:
    """`torch._dynamo.graph_break()` between a closure's cell write and the read that follows, in the
    entry (the resume function must carry the cell) or inside the closure itself."""
    x, shape = operand(draw, b)
    cell = new_cell(draw, b)
    b.emit(ir.Assign(cell.expr, init(cell.kind, x)))
    stmts, rebinds = write(draw, cell, mean_of("t"))
    inside = [GRAPH_BREAK] if boolean(draw) else []
    fn = b.fresh("gb")
    b.emit(ir.Def(fn, (ir.Param("t"),), with_nonlocal([cell.name] if rebinds else [], [
        *stmts, *inside, ir.Return(tanh(total(ir.Name("t"), read(cell))))])))
    r = b.bind(b.fresh("t"), ir.call(ir.Name(fn), x), shape, 1.0)
    b.emit(GRAPH_BREAK)
    b.bind(b.fresh("t"), tanh(total(r.expr, read(cell))), shape, 1.0)
    b.returns.append(cell.expr)


@fragment(FAMILY, "escaping-closure", nestable=False)
def escaping_closure(draw, b) -> None:
    """A closure over entry cells is stored in a global, list, dict or object attribute (and maybe
    returned); `between` calls it after the compiled call returned and logs the result in a global."""
    x, shape = operand(draw, b)
    cell = new_cell(draw, b, "e")
    b.emit(ir.Assign(cell.expr, init(cell.kind, x)))
    stmts, rebinds = write(draw, cell, ir.Const(0.25))
    esc = b.fresh("esc")
    reads = [read(cell)]
    if boolean(draw):
        captured = choose(draw, b.scope.visible_tensors())
        reads.append(ir.method(tanh(captured.expr), "mean"))
    body = [*stmts, ir.Return(total(ir.BinOp(ir.Name("t"), "*", ir.Const(0.5)), *reads))]
    b.emit(ir.Def(esc, (ir.Param("t"),), with_nonlocal([cell.name] if rebinds else [], body)))
    if boolean(draw):
        b.bind(b.fresh("t"), tanh(ir.call(ir.Name(esc), x)), shape, 1.0)
    access = store_escaped(draw, b, ir.Name(esc))
    if boolean(draw):
        b.returns.append(ir.Name(esc))
    log_between_call(b, access, ir.Const(0.25))


# Registered after this module's own fragments, so that shrinking (toward the first fragment) keeps landing
# on the simplest closures.
from . import agree, shadow, writers  # noqa: E402,F401  isort: skip
