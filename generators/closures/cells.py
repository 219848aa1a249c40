"""What a cell can hold, and how closures read, rebind and mutate it (shared by the closures fragments).

A `Cell` is a name plus the kind of value it holds. `init`, `read` and `write`
produce IR that is valid for that kind and keeps values bounded: reads yield a
Python number or a 0-d tensor of small magnitude, so they can be added to any
tensor, and writes never grow a value faster than a constant per call.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TypeVar

from .. import ir, tensor_ops
from ..choose import choose

T = TypeVar("T")

# Simplest first, so shrinking lands on an int cell.
KINDS = ("int", "tensor", "float", "list", "dict", "closure")
MUTABLE = ("tensor", "list", "dict")  # kinds that can be mutated in place, not only rebound


@dataclass(frozen=True)
class Cell:
    name: str
    kind: str

    @property
    def expr(self) -> ir.Name:
        return ir.Name(self.name)


def tanh(e: ir.Expr) -> ir.Expr:
    return ir.call("torch.tanh", e)


def total(first: ir.Expr, *rest: ir.Expr) -> ir.Expr:
    """`first + r0 + r1 ...` (left-associated, as Python would parse it)."""
    out = first
    for r in rest:
        out = ir.BinOp(out, "+", r)
    return out


def init(kind: str, operand: ir.Expr | None = None) -> ir.Expr:
    """A first value of `kind`; a tensor is derived from `operand`, or is a 0-d tensor at module level."""
    if kind == "int":
        return ir.Const(1)
    if kind == "float":
        return ir.Const(0.5)
    if kind == "tensor":
        if operand is None:
            return ir.call("torch.tensor", ir.Const(0.5))
        return ir.BinOp(tanh(operand), "*", ir.Const(0.5))
    if kind == "list":
        return ir.ListExpr((ir.Const(1),))
    if kind == "dict":
        return ir.DictExpr(((ir.Const("n"), ir.Const(1)),))
    v = ir.Name("v")
    return ir.Lambda(("v",), ir.BinOp(ir.BinOp(v, "*", ir.Const(2.0)), "+", ir.Const(1.0)))


def read(cell: Cell) -> ir.Expr:
    """A small scalar (Python number or 0-d tensor) that depends on the cell's current contents."""
    c = cell.expr
    return {
        "int": c,
        "float": c,
        "tensor": ir.method(c, "mean"),
        "list": ir.call("len", c),
        "dict": ir.Sub(c, ir.Const("n")),
        "closure": ir.Call(c, (ir.Const(0.5),)),
    }[cell.kind]


def write(draw, cell: Cell, arg: ir.Expr, mode: str | None = None) -> tuple[list[ir.Stmt], bool]:
    """Statements that change the cell: `(stmts, rebinds)`; a rebind needs `nonlocal`/`global` in a child.

    `mode` is "rebind" or "mutate" (in place); kinds that cannot be mutated are always rebound. `arg` is a
    small scalar the new contents may depend on.
    """
    c = cell.expr
    if mode is None:
        mode = choose(draw, ("rebind", "mutate")) if cell.kind in MUTABLE else "rebind"
    if cell.kind not in MUTABLE:
        mode = "rebind"
    if cell.kind == "int":
        return [ir.Assign(c, ir.BinOp(c, "+", ir.Const(1)))], True
    if cell.kind == "float":
        return [ir.Assign(c, ir.BinOp(ir.BinOp(c, "*", ir.Const(0.5)), "+", ir.Const(1.0)))], True
    if cell.kind == "closure":
        v = ir.Name("v")
        return [ir.Assign(c, ir.Lambda(("v",), ir.BinOp(ir.BinOp(v, "*", ir.Const(0.5)), "-", ir.Const(1.0))))], True
    if cell.kind == "tensor":
        if mode == "rebind":
            return [ir.Assign(c, tanh(ir.BinOp(c, "+", arg)))], True
        return [ir.ExprStmt(ir.method(c, "mul_", ir.Const(0.5)))], False
    if cell.kind == "list":
        if mode == "rebind":
            return [ir.Assign(c, ir.BinOp(c, "+", ir.ListExpr((arg,))))], True
        return [ir.ExprStmt(ir.method(c, "append", arg))], False
    key = ir.Sub(c, ir.Const("n"))
    if mode == "rebind":
        return [ir.Assign(c, ir.DictExpr(((ir.Const("n"), ir.BinOp(key, "+", ir.Const(1))),)))], True
    return [ir.Assign(key, ir.BinOp(key, "+", ir.Const(1)))], False


def mean_of(name: str) -> ir.Expr:
    """`name.mean()`: a scalar argument for writes inside a closure whose parameter is a tensor."""
    return ir.method(ir.Name(name), "mean")


FAMILY = "closures"


def operand(draw, b) -> tuple[ir.Expr, tuple[int, ...]]:
    """A visible tensor to feed a closure with (squashed so its magnitude is bounded), and its shape."""
    var = choose(draw, b.scope.visible_tensors())
    expr, _ = tensor_ops.squash(var)
    return expr, var.shape


def with_nonlocal(names: list[str], body: list[ir.Stmt]) -> tuple[ir.Stmt, ...]:
    unique = tuple(dict.fromkeys(names))
    return ((ir.Nonlocal(unique),) if unique else ()) + tuple(body)


def new_cell(draw, b, prefix: str = "c", only: tuple[str, ...] = KINDS) -> Cell:
    return Cell(b.fresh(prefix), choose(draw, only))


def store_escaped(draw, b, fn: ir.Expr) -> ir.Expr:
    """Store `fn` from the entry into module state; returns the expression `between` reaches it by."""
    where = choose(draw, ("global", "list", "dict", "attr"))
    g = b.fresh("ESC")
    if where == "global":
        b.add_global(g, ir.Const(None))
        b.declare("global", g)
        b.emit(ir.Assign(ir.Name(g), fn))
        return ir.Name(g)
    if where == "list":
        b.add_global(g, ir.ListExpr(()))
        b.emit(ir.ExprStmt(ir.method(ir.Name(g), "append", fn)))
        return ir.Sub(ir.Name(g), ir.Const(-1))
    if where == "dict":
        b.add_global(g, ir.DictExpr(()))
        b.emit(ir.Assign(ir.Sub(ir.Name(g), ir.Const("fn")), fn))
        return ir.Sub(ir.Name(g), ir.Const("fn"))
    box = b.fresh("Box")
    b.add_helper(ir.ClassDef(box, (), ()))
    b.add_global(g, ir.call(ir.Name(box)))
    b.emit(ir.Assign(ir.Attr(ir.Name(g), "fn"), fn))
    return ir.Attr(ir.Name(g), "fn")


def log_between_call(b, fn: ir.Expr, *args: ir.Expr) -> None:
    """In `between`, call `fn(*args)` and append the result to a module-level log the snapshot compares."""
    log = b.fresh("LOG")
    b.add_global(log, ir.ListExpr(()))
    b.between.append(ir.ExprStmt(ir.method(ir.Name(log), "append", ir.Call(fn, tuple(args)))))
