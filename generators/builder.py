"""The mutable context a program is drawn into: scopes, visible tensors, globals, call plan.

Fragments (one small drawing function per construct, see `fragments.py`) append
statements to the current scope and register what they bind, so later
fragments can use it; shapes and magnitude bounds are tracked as they go, which
is what keeps every program valid by construction.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from math import prod
from typing import TypeVar

from . import ir
from .choose import choose

T = TypeVar("T")

BOUND_LIMIT = 1e3  # values past this are squashed with tanh before growing further


@dataclass
class TensorVar:
    """A tensor visible to the code being drawn: its name, shape, and a bound on |values|."""

    name: str
    shape: tuple[int, ...]
    bound: float = 1.0
    dtype: str = "float32"
    requires_grad: bool = False

    @property
    def expr(self) -> ir.Name:
        return ir.Name(self.name)

    @property
    def numel(self) -> int:
        return prod(self.shape)


@dataclass
class InputParam:
    """One parameter of the entry function and how `inputs(device, call)` builds it.

    `make` builds the value for call 0; `per_call` overrides it for later calls
    (a perturbation of the call plan). Both are IR expressions that may use the
    names `device` and `torch`.
    """

    name: str
    make: ir.Expr
    per_call: dict[int, ir.Expr] = field(default_factory=dict)
    tensor: TensorVar | None = None


@dataclass
class Scope:
    """A function body under construction."""

    name: str
    parent: Scope | None
    stmts: list[ir.Stmt] = field(default_factory=list)
    tensors: list[TensorVar] = field(default_factory=list)
    declared: set[str] = field(default_factory=set)

    def visible_tensors(self) -> list[TensorVar]:
        return self.tensors


class Builder:
    """Collects a program while fragments are drawn into it."""

    def __init__(self, entry: str = "f") -> None:
        self.entry = entry
        self.imports: list[ir.Stmt] = [ir.Import("torch")]
        self.module: list[ir.Stmt] = []
        self.after_entry: list[ir.Stmt] = []
        self.params: list[InputParam] = []
        self.root = Scope(entry, None)
        self.scope = self.root
        self.tags: set[str] = set()
        self.between: list[ir.Stmt] = []
        self.calls = 2
        self.returns: list[ir.Expr] = []
        self.compile_options: dict[str, object] = {}
        self.dynamo_config: dict[str, object] = {}  # torch._dynamo.config patched around the compiled call only
        self.entry_decorators: list[ir.Expr] = []
        self.entry_factory: ir.Def | None = None
        self.eager_variant: Callable[[ir.Program], ir.Program] | None = None  # builds Program.eager_program
        self.intended_error: str | None = None  # set by a fragment that draws an illegal-on-purpose construct
        self._counters: dict[str, int] = {}
        self._family_state: dict[str, object] = {}
        self.nestable: list = []  # the fragments (of this program's table) that may be drawn in a nested body
        self.picker: Callable | None = None  # a guided campaign's picker, see `pick`

    def pick(self, draw, options: Sequence[T]) -> T:
        """One of `options` where a guided campaign may steer the choice too (a stdlib snippet pool, a Dynamo
        setting): through the campaign's picker when there is one, which records the pick as the very choice
        `choose` makes, so the program re-draws without it; else `choose`."""
        return self.picker(draw, options) if self.picker is not None else choose(draw, options)

    # ---- names and tags ----
    def fresh(self, prefix: str) -> str:
        n = self._counters.get(prefix, 0)
        self._counters[prefix] = n + 1
        return f"{prefix}{n}"

    def tag(self, *tags: str) -> None:
        self.tags.update(tags)

    def state(self, key: str, factory: Callable[[], T]) -> T:
        """Per-program facts a family tracks beyond shapes (layouts, aliasing), created on first use."""
        if key not in self._family_state:
            self._family_state[key] = factory()
        return self._family_state[key]  # type: ignore[return-value]

    # ---- statements ----
    def emit(self, *stmts: ir.Stmt) -> None:
        self.scope.stmts.extend(stmts)

    def declare(self, kind: str, name: str) -> None:
        """Emit `global name` / `nonlocal name` once per scope (Python requires it before any use)."""
        key = f"{kind}:{name}"
        if key not in self.scope.declared:
            self.scope.declared.add(key)
            self.scope.stmts.insert(0, ir.Global((name,)) if kind == "global" else ir.Nonlocal((name,)))

    def bind(self, name: str, value: ir.Expr, shape: tuple[int, ...], bound: float,
             requires_grad: bool = False) -> TensorVar:
        """Emit `name = value` for a tensor value and make it visible to later fragments."""
        self.emit(ir.Assign(ir.Name(name), value))
        var = TensorVar(name, shape, bound, requires_grad=requires_grad)
        self.scope.tensors.append(var)
        return var

    def add_import(self, stmt: ir.Stmt) -> None:
        if stmt not in self.imports:
            self.imports.append(stmt)

    def add_global(self, name: str, value: ir.Expr) -> None:
        self.module.append(ir.Assign(ir.Name(name), value))

    def add_helper(self, stmt: ir.Stmt) -> None:
        self.module.append(stmt)

    # ---- inputs ----
    def add_input(self, name: str, shape: tuple[int, ...], *, offset: float = 0.0,
                  requires_grad: bool = False) -> TensorVar:
        var = TensorVar(name, shape, 1.0 + abs(offset), requires_grad=requires_grad)
        self.params.append(InputParam(name, linspace(shape, offset, requires_grad), tensor=var))
        self.root.tensors.append(var)
        return var

    def add_value_input(self, name: str, value: ir.Expr) -> InputParam:
        param = InputParam(name, value)
        self.params.append(param)
        return param

    # ---- nesting ----
    @contextmanager
    def nested(self, name: str, params: tuple[ir.Param, ...] = (), inherit: bool = True):
        """Draw the body of a nested function; on exit its `def` is emitted into the parent scope."""
        parent = self.scope
        child = Scope(name, parent)
        if inherit:
            child.tensors = list(parent.tensors)
        self.scope = child
        try:
            yield child
        finally:
            self.scope = parent
        parent.stmts.append(ir.Def(name, params, tuple(child.stmts)))

    @property
    def depth(self) -> int:
        d, s = 0, self.scope
        while s.parent is not None:
            d, s = d + 1, s.parent
        return d


def linspace(shape: tuple[int, ...], offset: float = 0.0, requires_grad: bool = False) -> ir.Expr:
    """A deterministic, non-constant tensor of `shape` on `device`, values in [-1, 1] + offset."""
    n = max(prod(shape), 1)
    base: ir.Expr = ir.call("torch.linspace", ir.Const(-1.0 + offset), ir.Const(1.0 + offset), ir.Const(n),
                            device=ir.Name("device"))
    if prod(shape) == 0:
        base = ir.call("torch.zeros", ir.Const(0), device=ir.Name("device"))
    if len(shape) != 1 or prod(shape) == 0:
        base = ir.method(base, "reshape", *(ir.Const(s) for s in shape))
    if requires_grad:
        base = ir.method(base, "requires_grad_")
    return base


ENTRY_SLOT = ir.ExprStmt(ir.Name("__dynfuzz_entry__"))


def place_entry(factory: ir.Def, entry: ir.Def) -> ir.Def:
    """The entry factory with its `ENTRY_SLOT` statement replaced by the entry `def`.

    A fragment that wants the entry created by a factory (sharing cells with helpers) puts the slot in the
    factory body; the entry itself is only complete once every fragment has been drawn.
    """
    body = tuple(entry if stmt == ENTRY_SLOT else stmt for stmt in factory.body)
    return ir.Def(factory.name, factory.params, body, factory.decorators)
