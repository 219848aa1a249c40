"""Shared machinery of the `stdlib` family: snippets, their inputs, and folding their value into a tensor.

A stdlib fragment draws one to three *snippets* from the pool of its area (builtins, dict methods,
itertools...). A snippet is a few statements written as source (`ir.Code`, every local a fresh name)
that compute one Python number from small int lists, constants and tensor metadata; the fragment then
folds that number into a tensor the entry returns, so a wrong value Dynamo computes for the Python
object model shows in the outputs. Snippets never mutate the lists they are given (an argument list may
be one of them): they copy first.
"""
from __future__ import annotations

import ast
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from .. import ir, tensor_ops
from ..builder import Builder, TensorVar
from ..choose import boolean, choose, integer
from ..effects.common import lit
from ..render import to_ast

FAMILY = "stdlib"

# Int lists a snippet may be handed: length 2..4, elements 0..7, duplicates and a zero among them.
INT_LISTS = ([3, 1, 2], [4, 0, 2, 5], [1, 5, 3, 3], [2, 7])
LIST_BOUND = 7
LIST_SUM = 15


@dataclass
class Snip:
    """What a snippet emits: statements as source, the value expression and a bound on |value|."""

    lines: list[str]
    value: str
    bound: float


class Ctx:
    """The drawing context handed to snippets: fresh names, int lists, shape-derived ints."""

    def __init__(self, draw, b: Builder) -> None:
        self.draw = draw
        self.b = b
        self.tensor: TensorVar = tensor_ops.pick(draw, b)

    def name(self, prefix: str = "s") -> str:
        return self.b.fresh(prefix)

    def names(self, *prefixes: str) -> list[str]:
        return [self.b.fresh(p) for p in prefixes]

    def choose(self, options: Sequence):
        return choose(self.draw, options)

    def integer(self, lo: int, hi: int) -> int:
        return integer(self.draw, lo, hi)

    def flag(self) -> bool:
        return boolean(self.draw)

    def ints(self) -> str:
        """An int list as source: a literal, a module-level global, or an entry argument (changed on the
        second call, so the guards on its contents are exercised)."""
        value = self.choose(INT_LISTS)
        where = self.choose(("literal", "literal", "global", "arg"))
        if where == "literal":
            return repr(value)
        if where == "global":
            name = self.b.fresh("INTS_")
            self.b.add_global(name, lit(tuple(value)) if self.flag() else lit(value))
            return name
        name = self.b.fresh("ints")
        param = self.b.add_value_input(name, lit(value))
        if self.flag():
            param.per_call[1] = lit(self.choose(INT_LISTS))
        return name

    def dim(self, varying: bool = True) -> str:
        """A small non-negative int read from tensor metadata (or a constant), as source; with `varying`, it
        may be a size that changes on every call (see `varying`)."""
        t = self.tensor
        kinds = ("const", "shape", "size", "ndim", "dim", "len") + (("varying",) if varying else ())
        kind = self.choose(kinds)
        if kind == "varying":
            return self.varying()
        if kind == "const" or not t.shape:
            return str(self.integer(1, 4))
        i = self.integer(0, len(t.shape) - 1)
        if kind == "shape":
            return f"{t.name}.shape[{i}]"
        if kind == "size":
            return f"{t.name}.size({i - len(t.shape) if self.flag() else i})"
        if kind == "ndim":
            return f"{t.name}.ndim"
        if kind == "dim":
            return f"{t.name}.dim()"
        return f"len({t.name}.shape)"

    def varying(self) -> str:
        """A size (1..4) that changes on every call, read only here: a tensor argument's length or an int
        argument. From the first recompile on, automatic dynamic makes it a SymInt, so the snippet's
        builtins, containers and arithmetic run on symbolic ints and leave shape guards behind."""
        plan = self.choose(((2, 3, 4), (3, 1, 2), (4, 2, 3)))
        name = self.b.fresh("sv")
        as_tensor = self.flag()

        def value(n: int) -> ir.Expr:
            return ir.call("torch.zeros", ir.Const(n), device=ir.Name("device")) if as_tensor else ir.Const(n)

        param = self.b.add_value_input(name, value(plan[0]))
        for call, n in enumerate(plan[1:], start=1):
            param.per_call[call] = value(n)
        self.b.calls = max(self.b.calls, len(plan))
        return self.choose((f"{name}.shape[0]", f"len({name})", f"{name}.size(0)")) if as_tensor else name

    def use_import(self, module: str, alias: str | None = None) -> None:
        self.b.add_import(ir.Import(module, alias))

    def helper(self, text: str) -> None:
        self.b.add_helper(ir.Code(text))


Snippet = Callable[[Ctx], Snip]


def tensor_operand(draw, b: Builder) -> tuple[TensorVar, str, float]:
    """A visible tensor, as source text (wrapped in tanh when its bound is large), and that text's bound."""
    var = tensor_ops.pick(draw, b)
    operand, bound = tensor_ops.squash(var)
    return var, ast.unparse(to_ast(operand)), bound


def bind_output(b: Builder, prefix: str, text: str, shape: tuple[int, ...], bound: float) -> None:
    """Bind the tensor expression `text` to a fresh name, returned by the entry when bound at its top level."""
    name = b.fresh(prefix)
    b.bind(name, ir.CodeExpr(text), shape, bound)
    if b.scope is b.root:
        b.returns.append(ir.Name(name))
DIM_BOUND = 4


def fold(draw, b: Builder, value: str, bound: float) -> None:
    """Bind a tensor that depends on the Python number `value` (bounded by `bound`) and return it."""
    var, src, tbound = tensor_operand(draw, b)
    how = choose(draw, ("add", "scale", "tensor", "index"))
    if how == "index" and var.numel > 0:
        text = f"{src}.reshape(-1)[int({value}) % {var.numel}] + 1"
        shape, out_bound = (), tbound + 1
    elif how == "scale":
        text = f"{src} * (({value}) % 3 + 1)"
        shape, out_bound = var.shape, tbound * 4
    elif how == "tensor":
        text = f"{src} + torch.tensor(float({value}), device={var.name}.device)"
        shape, out_bound = var.shape, tbound + bound
    else:
        text = f"{src} + ({value})"
        shape, out_bound = var.shape, tbound + bound
    bind_output(b, "v", text, shape, out_bound)


def area(draw, b: Builder, pool: Sequence[Snippet], most: int = 3) -> None:
    """Emit one to `most` snippets of `pool` and fold each value into an output (or their sum into one)."""
    ctx = Ctx(draw, b)
    snips = [b.pick(draw, pool)(ctx)]
    while len(snips) < most and integer(draw, 0, 2) == 0:
        snips.append(b.pick(draw, pool)(ctx))
    for s in snips:
        b.emit(*(ir.Code(line) for line in s.lines))
    if len(snips) > 1 and boolean(draw):
        fold(draw, b, " + ".join(f"({s.value})" for s in snips), sum(s.bound for s in snips))
    else:
        for s in snips:
            fold(draw, b, s.value, s.bound)
