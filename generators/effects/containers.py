"""Container mutations: every common container kind, mutated through methods, subscripts, slices,
`del` and augmented assignment, where the container is an argument, a global, a cell or an
attribute of an object reachable from one of those.

Every operation is total (guarded with `if c:` / `if v in c:` where it could raise), so a
global container that keeps changing across calls never makes a program invalid.
"""
from __future__ import annotations

from collections.abc import Callable

from .. import ir
from ..builder import Builder
from ..choose import boolean, integer
from ..fragments import fragment
from .common import FAMILY, choice, guarded, holder_class, lit, read_into_output, small_int, stmt, use_collections

Op = tuple[str, bool, Callable[[ir.Expr, ir.Expr, ir.Expr], list[ir.Stmt]]]  # (tag, rebinds, build)

KEYS = ("a", "b", "c")


def _m(c: ir.Expr, name: str, *args: ir.Expr, **kw: ir.Expr) -> ir.ExprStmt:
    return stmt(ir.method(c, name, *args, **kw))


def _nonempty(c, *body):
    return [guarded(c, *body)]


def _has(v, c, *body):
    return [guarded(ir.BinOp(v, "in", c), *body)]


_SEQ_COMMON: list[Op] = [
    ("via-method", False, lambda c, v, k: [_m(c, "append", v)]),
    ("via-method", False, lambda c, v, k: [_m(c, "extend", ir.ListExpr((v, ir.Const(1))))]),
    ("via-method", False, lambda c, v, k: _nonempty(c, _m(c, "pop"))),
    ("via-method", False, lambda c, v, k: _has(v, c, _m(c, "remove", v))),
    ("via-method", False, lambda c, v, k: [_m(c, "clear")]),
    ("via-method", False, lambda c, v, k: [_m(c, "reverse")]),
    ("via-subscript", False, lambda c, v, k: _nonempty(c, ir.Assign(ir.Sub(c, ir.Const(0)), v))),
    ("via-augassign", True, lambda c, v, k: [ir.AugAssign(c, "+", ir.ListExpr((v,)))]),
]

LIST_OPS: list[Op] = _SEQ_COMMON + [
    ("via-method", False, lambda c, v, k: [_m(c, "insert", ir.Const(0), v)]),
    ("via-method", False, lambda c, v, k: _nonempty(c, _m(c, "pop", ir.Const(0)))),
    ("via-method", False, lambda c, v, k: [_m(c, "sort")]),
    ("via-method", False, lambda c, v, k: [_m(c, "sort", reverse=ir.Const(True))]),
    ("via-slice", False, lambda c, v, k: [ir.Assign(ir.Sub(c, ir.Slice(ir.Const(1), ir.Const(2))),
                                                    ir.ListExpr((v, v)))]),
    ("via-del", False, lambda c, v, k: [ir.Del((ir.Sub(c, ir.Slice(None, ir.Const(1))),))]),
    ("via-slice", False, lambda c, v, k: [ir.Assign(ir.Sub(c, ir.Slice(None, ir.Const(0))), ir.ListExpr((v,)))]),
    ("via-slice", False, lambda c, v, k: [ir.Assign(ir.Sub(c, ir.Slice()),
                                                    ir.Sub(c, ir.Slice(None, None, ir.Const(-1))))]),
    ("via-augassign", True, lambda c, v, k: [ir.AugAssign(c, "*", ir.Const(2)),
                                             ir.Del((ir.Sub(c, ir.Slice(ir.Const(6), None)),))]),
    ("via-augassign", False, lambda c, v, k: _nonempty(c, ir.AugAssign(ir.Sub(c, ir.Const(-1)), "+", v))),
]

DEQUE_OPS: list[Op] = _SEQ_COMMON + [
    ("via-method", False, lambda c, v, k: [_m(c, "appendleft", v)]),
    ("via-method", False, lambda c, v, k: [_m(c, "extendleft", ir.ListExpr((v, ir.Const(2))))]),
    ("via-method", False, lambda c, v, k: _nonempty(c, _m(c, "popleft"))),
    ("via-method", False, lambda c, v, k: [_m(c, "rotate", ir.Const(1))]),
    ("via-method", False, lambda c, v, k: [_m(c, "rotate", ir.Const(-2))]),
    ("via-del", False, lambda c, v, k: _nonempty(c, ir.Del((ir.Sub(c, ir.Const(0)),)))),
]

BYTES_OPS: list[Op] = [
    ("via-method", False, lambda c, v, k: [_m(c, "append", v)]),
    ("via-method", False, lambda c, v, k: [_m(c, "extend", ir.Const(b"\x01\x02"))]),
    ("via-method", False, lambda c, v, k: _nonempty(c, _m(c, "pop"))),
    ("via-method", False, lambda c, v, k: [_m(c, "reverse")]),
    ("via-subscript", False, lambda c, v, k: _nonempty(c, ir.Assign(ir.Sub(c, ir.Const(0)), v))),
    ("via-slice", False, lambda c, v, k: [ir.Assign(ir.Sub(c, ir.Slice(ir.Const(0), ir.Const(1))),
                                                    ir.Const(b"\x03\x04"))]),
    ("via-del", False, lambda c, v, k: [ir.Del((ir.Sub(c, ir.Slice(None, ir.Const(1))),))]),
    ("via-slice", False, lambda c, v, k: [ir.Assign(ir.Sub(c, ir.Slice(None, ir.Const(0))), ir.Const(b"\x06"))]),
    ("via-augassign", True, lambda c, v, k: [ir.AugAssign(c, "+", ir.Const(b"\x05"))]),
]

DICT_OPS: list[Op] = [
    ("via-subscript", False, lambda c, v, k: [ir.Assign(ir.Sub(c, k), v)]),
    ("via-method", False, lambda c, v, k: [_m(c, "update", ir.DictExpr(((k, v),)))]),
    ("via-method", False, lambda c, v, k: [_m(c, "setdefault", k, v)]),
    ("via-method", False, lambda c, v, k: [_m(c, "pop", k, ir.Const(None))]),
    ("via-method", False, lambda c, v, k: _nonempty(c, _m(c, "popitem"))),
    ("via-method", False, lambda c, v, k: [_m(c, "clear")]),
    ("via-del", False, lambda c, v, k: _has(k, c, ir.Del((ir.Sub(c, k),)))),
    ("via-augassign", True, lambda c, v, k: [ir.AugAssign(c, "|", ir.DictExpr(((k, v),)))]),
    ("via-augassign", False, lambda c, v, k: _has(k, c, ir.AugAssign(ir.Sub(c, k), "+", v))),
]

ODICT_OPS: list[Op] = DICT_OPS + [
    ("via-method", False, lambda c, v, k: _has(k, c, _m(c, "move_to_end", k))),
    ("via-method", False, lambda c, v, k: _has(k, c, _m(c, "move_to_end", k, last=ir.Const(False)))),
    ("via-method", False, lambda c, v, k: _nonempty(c, _m(c, "popitem", last=ir.Const(False)))),
]

DEFAULT_INT_OPS: list[Op] = DICT_OPS + [
    ("via-augassign", False, lambda c, v, k: [ir.AugAssign(ir.Sub(c, k), "+", v)]),
]

DEFAULT_LIST_OPS: list[Op] = [
    ("via-method", False, lambda c, v, k: [stmt(ir.method(ir.Sub(c, k), "append", v))]),
    ("via-method", False, lambda c, v, k: [stmt(ir.method(ir.Sub(c, k), "extend", ir.ListExpr((v,))))]),
    ("via-augassign", False, lambda c, v, k: [ir.AugAssign(ir.Sub(c, k), "+", ir.ListExpr((v,)))]),
    ("via-method", False, lambda c, v, k: [_m(c, "pop", k, ir.Const(None))]),
    ("via-del", False, lambda c, v, k: _has(k, c, ir.Del((ir.Sub(c, k),)))),
]

SET_OPS: list[Op] = [
    ("via-method", False, lambda c, v, k: [_m(c, "add", v)]),
    ("via-method", False, lambda c, v, k: [_m(c, "discard", v)]),
    ("via-method", False, lambda c, v, k: _has(v, c, _m(c, "remove", v))),
    ("via-method", False, lambda c, v, k: [_m(c, "update", ir.SetExpr((v, ir.Const(1))))]),
    ("via-method", False, lambda c, v, k: [_m(c, "clear")]),
    ("via-augassign", True, lambda c, v, k: [ir.AugAssign(c, "|", ir.SetExpr((v,)))]),
    ("via-augassign", True, lambda c, v, k: [ir.AugAssign(c, "-", ir.SetExpr((v,)))]),
    ("via-augassign", True, lambda c, v, k: [ir.AugAssign(c, "&", lit({0, 1, 2, 3}))]),
    ("via-augassign", True, lambda c, v, k: [ir.AugAssign(c, "^", ir.SetExpr((v,)))]),
]

IMMUTABLE_TUPLE_OPS: list[Op] = [
    ("augassign-immutable", True, lambda c, v, k: [ir.AugAssign(c, "+", ir.TupleExpr((v,)))]),
    ("augassign-immutable", True, lambda c, v, k: [ir.AugAssign(c, "*", ir.Const(2)),
                                                   ir.Assign(c, ir.Sub(c, ir.Slice(None, ir.Const(6))))]),
    ("rebind", True, lambda c, v, k: [ir.Assign(c, ir.BinOp(c, "+", ir.TupleExpr((v, ir.Const(1)))))]),
    ("rebind", True, lambda c, v, k: [ir.Assign(c, ir.Sub(c, ir.Slice(ir.Const(1), None)))]),
]

IMMUTABLE_FROZENSET_OPS: list[Op] = [
    ("augassign-immutable", True, lambda c, v, k: [ir.AugAssign(c, "|", ir.SetExpr((v,)))]),
    ("augassign-immutable", True, lambda c, v, k: [ir.AugAssign(c, "-", ir.SetExpr((v,)))]),
    ("augassign-immutable", True, lambda c, v, k: [ir.AugAssign(c, "&", lit({1, 2, 3, 4}))]),
    ("rebind", True, lambda c, v, k: [ir.Assign(c, ir.BinOp(c, "|", ir.SetExpr((v, ir.Const(1)))))]),
]

OPS: dict[str, list[Op]] = {
    "list": LIST_OPS, "dict": DICT_OPS, "set": SET_OPS, "deque": DEQUE_OPS, "odict": ODICT_OPS,
    "defaultdict": DEFAULT_INT_OPS, "bytearray": BYTES_OPS, "tuple": IMMUTABLE_TUPLE_OPS,
    "frozenset": IMMUTABLE_FROZENSET_OPS,
}
KINDS = (*OPS, "deque", "defaultdict")  # the two kinds with two variants are drawn twice as often
TABLES = {k: choice(tuple(v)) for k, v in (*OPS.items(), ("defaultdict-list", DEFAULT_LIST_OPS))}
PRESETS = (([1, 2], ("a", "b")), ([], ()), ([3], ("b",)), ([2, 0, 5], ("c", "a", "b")))
WHERE = ("arg", "global", "cell", "object")


def initial(draw, b: Builder, kind: str) -> tuple[ir.Expr, str]:
    """The container's initial value as IR, and the variant (e.g. `deque-maxlen`, `defaultdict-list`)."""
    nums, keys = draw(choice(PRESETS))
    items = {k: i + 1 for i, k in enumerate(keys)}
    if kind in ("deque", "odict", "defaultdict"):
        use_collections(b)
    if kind == "list":
        return lit(nums), kind
    if kind == "tuple":
        return lit(tuple(nums)), kind
    if kind == "set":
        return lit(set(nums)), kind
    if kind == "frozenset":
        return ir.call("frozenset", lit(set(nums))), kind
    if kind == "bytearray":
        return ir.call("bytearray", ir.Const(bytes(nums))), kind
    if kind == "dict":
        return lit(items), kind
    if kind == "odict":
        return ir.call("collections.OrderedDict", lit(list(items.items()))), kind
    if kind == "deque":
        if boolean(draw):
            return ir.call("collections.deque", lit(nums), maxlen=ir.Const(integer(draw, 1, 3))), "deque-maxlen"
        return ir.call("collections.deque", lit(nums)), kind
    if boolean(draw):
        return ir.call("collections.defaultdict", ir.Name("list"), lit({k: [v] for k, v in items.items()})), \
            "defaultdict-list"
    return ir.call("collections.defaultdict", ir.Name("int"), lit(items)), kind


def read_scalar(c: ir.Expr, variant: str) -> ir.Expr:
    """A small int that depends on the container's contents (and, for `% 97` sums, its values)."""
    if variant == "defaultdict-list":
        return ir.call("len", c)
    if variant in ("dict", "odict", "defaultdict"):
        return ir.BinOp(ir.call("sum", ir.method(c, "values")), "%", ir.Const(97))
    return ir.BinOp(ir.call("sum", c), "%", ir.Const(97))


def mutations(draw, c: ir.Expr, variant: str, n: int) -> tuple[list[ir.Stmt], set[str], bool]:
    """`n` operations on container `c`: statements, the tags they exercise, and whether any rebinds `c`."""
    table = TABLES["defaultdict-list" if variant == "defaultdict-list" else variant.split("-")[0]]
    stmts: list[ir.Stmt] = []
    tags: set[str] = set()
    rebinds = False
    for _ in range(n):
        tag, rebind, build = draw(table)
        stmts += build(c, ir.Const(small_int(draw)), ir.Const(draw(choice(KEYS))))
        tags.add(tag)
        rebinds |= rebind
    return stmts, tags, rebinds


def place(draw, b: Builder, init: ir.Expr, where: str) -> tuple[ir.Expr, str | None]:
    """Make the container reachable from `where`; returns the expression naming it and, for a
    global, its name (rebinding it needs a `global` declaration)."""
    if where == "arg":
        name = b.fresh("c")
        b.add_value_input(name, init)
        return ir.Name(name), None
    if where == "global":
        name = b.fresh("C_").upper()
        b.add_global(name, init)
        return ir.Name(name), name
    if where == "object":
        make = holder_class(draw, b)
        if b.scope is b.root and boolean(draw):
            name = b.fresh("o")
            b.add_value_input(name, make(init))
        else:
            name = b.fresh("OBJ_").upper()
            b.add_global(name, make(init))
        return ir.Attr(ir.Name(name), "items"), None
    name = b.fresh("cell")
    b.emit(ir.Assign(ir.Name(name), init))
    return ir.Name(name), None


def _mutate(draw, b: Builder, n_ops: int) -> None:
    kind = draw(choice(KINDS))
    wheres = WHERE if b.scope is b.root else ("global", "object", "cell")
    where = draw(choice(wheres))
    init, variant = initial(draw, b, kind)
    c, global_name = place(draw, b, init, where)
    stmts, tags, rebinds = mutations(draw, c, variant, n_ops)
    if where == "cell":
        fn = b.fresh("mutate")
        decl = (ir.Nonlocal((c.id,)),) if rebinds else ()
        b.emit(ir.Def(fn, (), (*decl, *stmts)), stmt(ir.call(ir.Name(fn))))
    else:
        if global_name is not None and rebinds:
            b.declare("global", global_name)
        b.emit(*stmts)
    read_into_output(draw, b, read_scalar(c, variant))
    if where == "cell" and b.scope is b.root and boolean(draw):
        b.returns.append(c)
    b.tag(f"container-{variant}", f"where-{where}", *tags)


@fragment(FAMILY, "container", weight=6)
def container_mutation(draw, b: Builder) -> None:
    """One or two mutations of one container of any kind, wherever it lives."""
    _mutate(draw, b, integer(draw, 1, 2))


@fragment(FAMILY, "ordering", weight=3)
def ordering(draw, b: Builder) -> None:
    """Several mutations of one container whose final state depends on their order."""
    _mutate(draw, b, integer(draw, 3, 5))
