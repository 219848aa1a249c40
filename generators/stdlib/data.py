"""Structured values: torch.utils._pytree over nested containers of tensors, module-level dataclasses,
typing.NamedTuple, enum.Enum / IntEnum, and str methods building dict keys.

Pytree calls go through Dynamo's pytree polyfill; dataclasses and named tuples through its
user-defined-object and `NamedTupleVariable` models; enum members are constants it guards on. Each
construct ends in a tensor (pytree) or a number folded into one.
"""
from __future__ import annotations

import ast

from .. import ir, tensor_ops
from ..builder import Builder
from ..choose import choose, integer
from ..fragments import fragment
from .common import DIM_BOUND, FAMILY, LIST_BOUND, Ctx, Snip, area, fold, to_ast


def _dataclass(c: Ctx) -> Snip:
    cls, o, r = c.name("Cfg"), c.name("dc"), c.name("da")
    c.b.add_import(ir.Import("dataclasses"))
    frozen = c.flag()
    c.helper(f"@dataclasses.dataclass(frozen={frozen})\nclass {cls}:\n    a: int\n    b: int = 2\n"
             f"    tags: list = dataclasses.field(default_factory=list)")
    d = c.dim()
    lines = [f"{o} = {cls}({d}, tags=[1, 2])"]
    form = c.choose((f"{o}.a * 3 + {o}.b + len({o}.tags) + len(dataclasses.fields({o}))",
                     f"dataclasses.replace({o}, b=5).b + {o}.a + int({o} == {cls}({d}, 2, [1, 2]))",
                     f"sum(v for v in dataclasses.asdict({o}).values() if isinstance(v, int)) + "
                     f"len(dataclasses.astuple({o}))",
                     f"int(dataclasses.is_dataclass({o})) + [f.name for f in dataclasses.fields({cls})].index('b') + "
                     f"{o}.a"))
    if not frozen and c.flag():
        lines += [f"{o}.b = {o}.a + 1", f"{o}.tags.append(3)"]
    return Snip(lines + [f"{r} = {form}"], r, 4 * DIM_BOUND + 20)


def _namedtuple(c: Ctx) -> Snip:
    cls, p, r = c.name("Point"), c.name("pt"), c.name("nt")
    c.b.add_import(ir.ImportFrom("typing", ("NamedTuple",)))
    c.helper(f"class {cls}(NamedTuple):\n    a: int\n    b: int = 1\n\n    def total(self):\n"
             f"        return self.a * 2 + self.b")
    d = c.dim()
    lines = [f"{p} = {cls}({d}, {c.ints()}[0])"]
    form = c.choose((f"{p}.total() + {p}[0] + len({p})", f"{p}._replace(b=4).total() + sum({p})",
                     f"{cls}({d}).b + {p}._asdict()['a'] + int({p} > {cls}(0, 0))",
                     f"(lambda a, b: a - b)(*{p}) + {p}.index({p}.b) + {p}.count({d})"))
    return Snip(lines + [f"{r} = {form}"], r, 4 * (DIM_BOUND + LIST_BOUND) + 10)


def _enum(c: Ctx) -> Snip:
    cls, k, r = c.name("Mode"), c.name("md"), c.name("en")
    c.b.add_import(ir.Import("enum"))
    base = c.choose(("enum.Enum", "enum.IntEnum"))
    c.helper(f"class {cls}({base}):\n    A = 1\n    B = 2\n    C = 3")
    d = c.dim()
    member = c.choose(("A", "B", "C"))
    lines = [f"{k} = {cls}.{member}", f"{r} = 5 if {k} is {cls}.B else ({k}.value * 2 if {k} == {cls}.A else 1)"]
    form = c.choose((f"{{{cls}.A: 1, {cls}.B: {d}, {cls}.C: 3}}[{k}]",
                     f"len({cls}) + {cls}({k}.value).value + len({k}.name)",
                     f"[m.value for m in {cls}][-1] + int({k} in {cls}) + int({cls}['B'] is {cls}.B)"))
    if base == "enum.IntEnum":
        # compared with a constant: against a dynamic size Dynamo crashes (corpus/intenum_lt_symint_crash.py)
        form += f" + {k} * 2 + int({k} < 3) + int({k} >= {cls}.A)"
    return Snip(lines + [f"{r} = {r} + {form}"], r, 30)


def _strings(c: Ctx) -> Snip:
    d, r = c.names("sd", "sk")
    # never a dynamic size: a key formatted from a SymInt misses the dict (corpus/str_format_symint_dict_key_missed.py)
    dim = c.dim(varying=False)
    key = c.choose((f"'_'.join(['w', str({dim})])", f"'a-b-c'.split('-')[{dim} % 3]", f"'{{}}x{{}}'.format({dim}, 2)",
                    f"'ab'.upper() + str({dim})", f"'layer.0'.replace('0', str({dim}))", f"f'k{{{dim}}}'"))
    key = f"({key})"
    lines = [f"{d} = {{'w_1': 1, 'W_2': 2, 'b': 3, '1x2': 4, 'AB1': 5, 'layer.2': 6, 'k3': 7}}",
             f"{r} = {d}.get({key}, 8) + int({key}.startswith(('w', 'A', 'l'))) + len({key}.strip())"]
    if c.flag():
        lines.append(f"{r} = {r} + int('ab'.endswith('b')) + 'abcab'.count('ab') + 'abc'.find('c') + "
                     f"len('x,y'.split(',')) + int('3'.isdigit()) + len('  a '.strip()) + int('Ab'.lower() == 'ab')")
    return Snip(lines, r, 30)


def _dataclass_behaviour(c: Ctx) -> Snip:
    """A dataclass with __post_init__, a method, a property, order=True comparisons and a subclass."""
    cls, sub, o, r = c.name("Span"), c.name("Wide"), c.name("sp"), c.name("db")
    c.b.add_import(ir.Import("dataclasses"))
    c.helper(f"@dataclasses.dataclass(order=True)\nclass {cls}:\n    lo: int\n    hi: int = 4\n"
             f"    n: int = dataclasses.field(init=False, default=0)\n\n    def __post_init__(self):\n"
             f"        self.n = self.hi - self.lo\n\n    def scaled(self, k):\n        return self.n * k\n\n"
             f"    @property\n    def mid(self):\n        return (self.lo + self.hi) // 2")
    c.helper(f"@dataclasses.dataclass(order=True)\nclass {sub}({cls}):\n    extra: int = 1")
    d = c.dim()
    k = c.choose((cls, sub))  # order=True compares instances of one class only
    lines = [f"{o} = {k}({d}, hi=6)"]
    form = c.choose((f"{o}.n + {o}.scaled(2) + {o}.mid", f"int({o} < {k}(5, 9)) + int({o} >= {k}(0)) + {o}.n",
                     f"int(isinstance({o}, {cls})) + int(type({o}) is {sub}) + len(dataclasses.fields({o}))",
                     f"sorted([{k}(3), {o}, {k}(1, 2)])[0].lo + max([{k}(2), {o}]).hi"))
    return Snip(lines + [f"{r} = {form}"], r, 40)


def _enum_flag(c: Ctx) -> Snip:
    cls, k, r = c.name("Perm"), c.name("pm"), c.name("fl")
    c.b.add_import(ir.Import("enum"))
    c.helper(f"class {cls}(enum.{c.choose(('Flag', 'IntFlag'))}):\n    R = enum.auto()\n    W = enum.auto()\n"
             f"    X = enum.auto()")
    lines = [f"{k} = {cls}.R | {cls}.{c.choose(('W', 'X'))}",
             f"{r} = int({cls}.R in {k}) + 2 * int(bool({k} & {cls}.X)) + {k}.value + len({cls}.__members__) + "
             f"int({cls}({k}.value) == {k}) + ({c.dim()} if {k} != {cls}.R else 0)"]
    return Snip(lines, r, 20)


STRUCT_POOL = (_dataclass, _namedtuple, _dataclass_behaviour)
ENUM_STR_POOL = (_enum, _enum_flag, _strings)


@fragment(FAMILY, FAMILY, "stdlib-dataclass", weight=8)
def stdlib_dataclass(draw, b: Builder) -> None:
    """Module-level dataclasses and typing.NamedTuple folded into an output."""
    area(draw, b, STRUCT_POOL, most=2)


@fragment(FAMILY, FAMILY, "stdlib-enum-str", weight=8)
def stdlib_enum_str(draw, b: Builder) -> None:
    """Enum members in conditions and as dict keys, and str methods building dict keys."""
    area(draw, b, ENUM_STR_POOL, most=2)


@fragment(FAMILY, FAMILY, "stdlib-pytree", weight=8)
def stdlib_pytree(draw, b: Builder) -> None:
    """tree_map / tree_flatten / tree_unflatten / tree_leaves over a nested dict/list/tuple of tensors."""
    b.add_import(ir.Import("torch.utils._pytree", "pytree"))
    a, other = tensor_ops.pick(draw, b), tensor_ops.pick(draw, b)
    (ea, ba), (eo, bo) = tensor_ops.squash(a), tensor_ops.squash(other)
    sa, so = ast.unparse(to_ast(ea)), ast.unparse(to_ast(eo))
    tree, leaves, spec, out = b.fresh("tree"), b.fresh("lv"), b.fresh("spec"), b.fresh("pt")
    # (the tree, the variable whose shape its last tensor leaf has); dicts flatten in insertion order
    shape, last = choose(draw, ((f"{{'a': {sa}, 'b': [{so}, ({sa} * 2, 3)]}}", a),
                                (f"[({sa},), {{'k': {so}}}, None]", other),
                                (f"({sa}, [{so}, {{'z': {sa}, 'y': 1.5}}])", a)))
    b.emit(ir.Code(f"{tree} = {shape}"))
    kind = choose(draw, ("map", "flatten", "leaves", "map-multi", "only"))
    bound = max(ba, bo) * 2 + 2
    if kind == "map":
        b.emit(ir.Code(f"{tree} = pytree.tree_map(lambda v: v * 2 + 1 if isinstance(v, torch.Tensor) else v, {tree})"))
        bound = bound * 2 + 1
    elif kind == "flatten":
        b.emit(ir.Code(f"{leaves}, {spec} = pytree.tree_flatten({tree})"))
        b.emit(ir.Code(f"{tree} = pytree.tree_unflatten([v + 1 if isinstance(v, torch.Tensor) else v "
                       f"for v in {leaves}], {spec})"))
        bound += 1
    elif kind == "map-multi":
        b.emit(ir.Code(f"{tree} = pytree.tree_map(lambda u, v: u - v * 0.5 if isinstance(u, torch.Tensor) else u, "
                       f"{tree}, {tree})"))
    elif kind == "only":
        b.emit(ir.Code(f"{tree} = pytree.tree_map_only(torch.Tensor, torch.tanh, {tree})"))
        bound = 1.0
    b.emit(ir.Code(f"{leaves} = [v for v in pytree.tree_leaves({tree}) if isinstance(v, torch.Tensor)]"))
    which = integer(draw, 0, 1)
    var = last if which else a
    b.bind(out, ir.CodeExpr(f"{leaves}[{-1 if which else 0}] * len({leaves})"), var.shape, bound * 4)
    if b.scope is b.root:
        b.returns.append(ir.Name(out))
    if integer(draw, 0, 2) == 0:
        fold(draw, b, f"len({leaves}) + pytree.tree_structure({tree}).num_leaves", 20)
