"""Program IR: small frozen dataclasses for the Python subset dynfuzz generates.

Expressions and statements mirror a handful of `ast` node kinds; `render.py`
turns them into `ast` nodes and unparses them, so precedence is always right.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Union

# ---- expressions -------------------------------------------------------------


@dataclass(frozen=True)
class Name:
    id: str


@dataclass(frozen=True)
class Const:
    value: Any


@dataclass(frozen=True)
class Call:
    func: Expr
    args: tuple[Expr, ...] = ()
    kwargs: tuple[tuple[str, Expr], ...] = ()


@dataclass(frozen=True)
class Attr:
    value: Expr
    attr: str


@dataclass(frozen=True)
class Sub:
    value: Expr
    index: Expr


@dataclass(frozen=True)
class Slice:
    lower: Expr | None = None
    upper: Expr | None = None
    step: Expr | None = None


@dataclass(frozen=True)
class BinOp:
    """Binary, comparison or boolean operator, spelled as in Python (`+`, `<`, `and`, `is`)."""

    left: Expr
    op: str
    right: Expr


@dataclass(frozen=True)
class Unary:
    op: str  # "-", "not", "~"
    operand: Expr


@dataclass(frozen=True)
class TupleExpr:
    elts: tuple[Expr, ...]


@dataclass(frozen=True)
class ListExpr:
    elts: tuple[Expr, ...]


@dataclass(frozen=True)
class SetExpr:
    elts: tuple[Expr, ...]


@dataclass(frozen=True)
class DictExpr:
    items: tuple[tuple[Expr, Expr], ...]


@dataclass(frozen=True)
class Lambda:
    params: tuple[str, ...]
    body: Expr


@dataclass(frozen=True)
class IfExp:
    test: Expr
    body: Expr
    orelse: Expr


@dataclass(frozen=True)
class CodeExpr:
    """One expression written as Python source (an f-string, a comprehension, a walrus, a starred call)."""

    text: str


Expr = Union[
    Name, Const, Call, Attr, Sub, Slice, BinOp, Unary, TupleExpr, ListExpr, SetExpr, DictExpr, Lambda, IfExp,
    CodeExpr,
]

# ---- statements --------------------------------------------------------------


@dataclass(frozen=True)
class Assign:
    target: Expr
    value: Expr


@dataclass(frozen=True)
class AugAssign:
    target: Expr
    op: str  # "+", "*", "|", ...
    value: Expr


@dataclass(frozen=True)
class ExprStmt:
    value: Expr


@dataclass(frozen=True)
class Return:
    value: Expr | None = None


@dataclass(frozen=True)
class Param:
    name: str
    default: Expr | None = None


@dataclass(frozen=True)
class Def:
    name: str
    params: tuple[Param, ...]
    body: tuple[Stmt, ...]
    decorators: tuple[Expr, ...] = ()


@dataclass(frozen=True)
class ClassDef:
    name: str
    bases: tuple[Expr, ...]
    body: tuple[Stmt, ...]


@dataclass(frozen=True)
class Nonlocal:
    names: tuple[str, ...]


@dataclass(frozen=True)
class Global:
    names: tuple[str, ...]


@dataclass(frozen=True)
class If:
    test: Expr
    body: tuple[Stmt, ...]
    orelse: tuple[Stmt, ...] = ()


@dataclass(frozen=True)
class For:
    target: Expr
    iter: Expr
    body: tuple[Stmt, ...]


@dataclass(frozen=True)
class Del:
    targets: tuple[Expr, ...]


@dataclass(frozen=True)
class Pass:
    pass


@dataclass(frozen=True)
class Import:
    module: str
    alias: str | None = None


@dataclass(frozen=True)
class ImportFrom:
    module: str
    names: tuple[str, ...]


@dataclass(frozen=True)
class With:
    items: tuple[tuple[Expr, Expr | None], ...]
    body: tuple[Stmt, ...]


@dataclass(frozen=True)
class Try:
    body: tuple[Stmt, ...]
    handlers: tuple[tuple[Expr | None, str | None, tuple[Stmt, ...]], ...]


@dataclass(frozen=True)
class Code:
    """One statement written as Python source (a `match`, a `while`, a generator `def`, a `try/finally`...).

    For constructs whose IR would only ever be rendered, never inspected: the text is parsed when the
    program is rendered, and must be exactly one statement (compound statements included).
    """

    text: str


Stmt = Union[
    Assign, AugAssign, ExprStmt, Return, Def, ClassDef, Nonlocal, Global, If, For, Del, Pass,
    Import, ImportFrom, With, Try, Code,
]


@dataclass(frozen=True)
class Program:
    """A whole module: imports, globals, helpers, the entry function, `inputs` and the call plan."""

    body: tuple[Stmt, ...]
    entry: str = "f"
    tags: frozenset[str] = field(default_factory=frozenset)
    eager_program: Program | None = None  # an equivalent program eager runs instead (cond as a plain `if`)
    intended_error: str | None = None  # the exception an illegal-on-purpose program is built to raise
    dynamo_config: tuple[tuple[str, Any], ...] = ()  # torch._dynamo.config patched around the compiled call


# ---- small constructors that keep strategies readable --------------------------


def name(id: str) -> Name:
    return Name(id)


def call(func: str | Expr, *args: Expr, **kwargs: Expr) -> Call:
    """`call("torch.sin", x)` or `call(Attr(x, "add_"), Const(1))`."""
    f = dotted(func) if isinstance(func, str) else func
    return Call(f, tuple(args), tuple(kwargs.items()))


def method(obj: Expr, meth: str, *args: Expr, **kwargs: Expr) -> Call:
    return Call(Attr(obj, meth), tuple(args), tuple(kwargs.items()))


def dotted(path: str) -> Expr:
    head, *rest = path.split(".")
    node: Expr = Name(head)
    for part in rest:
        node = Attr(node, part)
    return node


def const(v: Any) -> Const:
    return Const(v)
