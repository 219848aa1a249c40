"""Builtin functions over small int lists and tensor metadata: len, abs, min/max with key= and default=,
sum with start, any/all, sorted, reversed, zip, enumerate, map, filter, range objects, isinstance,
callable, getattr/setattr/hasattr/delattr, conversions, round, divmod, pow, chr/ord, iter/next, slices,
truthiness of containers.

Dynamo models each builtin with its own handler (`variables/builtin.py`, `polyfills/builtins.py`,
range and iterator variables); a wrong constant folded there is a wrong output here.
"""
from __future__ import annotations

from .. import ir
from ..builder import Builder
from ..fragments import fragment
from .common import DIM_BOUND, FAMILY, LIST_BOUND, LIST_SUM, Ctx, Snip, area


def _len_abs(c: Ctx) -> Snip:
    (r,) = c.names("n")
    L, d = c.ints(), c.dim()
    return Snip([f"{r} = len({L}) + abs({L}[0] - {d}) + abs(-{d})"], r, 4 + LIST_BOUND + 2 * DIM_BOUND)


def _min_max(c: Ctx) -> Snip:
    r, s = c.names("mx", "mn")
    L = c.ints()
    key = c.choose(("lambda a: (a % 3, a)", "abs", "lambda a: -a"))
    lines = [f"{r} = max({L}, key={key})",
             f"{s} = min([a for a in {L} if a > 100], default={c.dim()}) + min({L}) + max(3, {c.dim()}, 1)"]
    return Snip(lines, f"{r} * 2 + {s}", 3 * LIST_BOUND + 2 * DIM_BOUND + 3)


def _sum_start(c: Ctx) -> Snip:
    (r,) = c.names("sm")
    L = c.ints()
    form = c.choose((f"sum({L}, {c.dim()})", f"sum((a * 2 for a in {L}), start=1)",
                     f"sum([[a] for a in {L}], [])[-1]", f"sum(({L}[0] / 2, 0.25), 1.5)"))
    return Snip([f"{r} = {form}"], r, 2 * LIST_SUM + DIM_BOUND + 1)


def _any_all(c: Ctx) -> Snip:
    (r,) = c.names("aa")
    L, d = c.ints(), c.dim()
    return Snip([f"{r} = int(any(a > {d} for a in {L})) + 2 * int(all({L})) + 4 * int(any([])) + 8 * all(())"],
                r, 15)


def _sorted_reversed(c: Ctx) -> Snip:
    r, s = c.names("srt", "rev")
    L = c.ints()
    key = c.choose(("lambda a: -a", "lambda a: (a % 2, a)", "None"))
    lines = [f"{r} = sorted({L}, key={key}, reverse={c.flag()})",
             f"{s} = list(reversed({r}))" if c.flag() else f"{s} = [a for a in reversed(tuple({L}))]"]
    return Snip(lines, f"{r}[0] * 3 + {s}[0] - {r}[-1]", 5 * LIST_BOUND)


def _zip_enumerate(c: Ctx) -> Snip:
    (r,) = c.names("ze")
    L, M = c.ints(), c.ints()
    form = c.choose((f"sum(a * b for a, b in zip({L}, {M}))",
                     f"sum(i * a for i, a in enumerate({L}, start={c.dim()}))",
                     f"sum(i + a - b for i, (a, b) in enumerate(zip({L}, reversed({M}))))",
                     f"len(list(zip({L}, range(3), 'ab')))"))
    return Snip([f"{r} = {form}"], r, 4 * LIST_BOUND * (4 + DIM_BOUND))


def _map_filter(c: Ctx) -> Snip:
    (r,) = c.names("mf")
    L, M = c.ints(), c.ints()
    form = c.choose((f"sum(map(lambda a: a + 1, {L}))", f"len(list(filter(lambda a: a % 2, {L})))",
                     f"sum(filter(None, {L}))", f"sum(map(max, {L}, {M}))", f"sum(map(int, map(str, {L})))",
                     f"list(map(abs, filter(lambda a: a > 1, {L})))[-1:] == [{L}[-1]]"))
    return Snip([f"{r} = {form}"], r, LIST_SUM + 4)


def _range(c: Ctx) -> Snip:
    r, s = c.names("rg", "rv")
    d = c.dim()
    form = c.choose((f"len({r}) + {r}.index(3) + {r}[1] + int(3 in {r}) + sum({r}[::2])",
                     f"{r}[-1] + len({r}[1:]) + {r}.count(5) + int(4 in {r}) + {r}.start + {r}.step",
                     f"sum(range({d}, -1, -1)) + len(range(0)) + int(range(1, 3) == range(1, 3, 1))",
                     f"max(reversed({r})) + list({r})[0] + {r}[:2][-1]"))
    return Snip([f"{r} = range(1, {d} + 5, 2)", f"{s} = {form}"], s, 60)


def _isinstance_callable(c: Ctx) -> Snip:
    (r,) = c.names("ic")
    L, t = c.ints(), c.tensor.name
    return Snip([f"{r} = int(isinstance({L}, (list, tuple))) + 2 * int(issubclass(bool, int)) + "
                 f"4 * int(isinstance({t}, torch.Tensor)) + 8 * int(callable(len)) + int(callable({L})) + "
                 f"int(isinstance({c.dim()}, int)) + int(issubclass(type({t}), (int, str)))"], r, 20)


def _attrs(c: Ctx) -> Snip:
    o, r = c.names("ns", "at")
    c.use_import("types")
    d = c.dim()
    lines = [f"{o} = types.SimpleNamespace(a={d})",
             f"setattr({o}, 'b', {c.integer(1, 5)})",
             f"{r} = getattr({o}, 'a') + getattr({o}, 'c', 5) + int(hasattr({o}, 'b')) + {o}.b"]
    if c.flag():
        lines += [f"delattr({o}, 'b')", f"{r} = {r} + int(hasattr({o}, 'b')) + len(vars({o}))"]
    return Snip(lines, r, DIM_BOUND + 14)


def _attrs_global(c: Ctx) -> Snip:
    """getattr/setattr/hasattr/delattr on a pre-existing module-level object (a side effect to replay)."""
    cls, obj, r = c.name("Box"), c.name("BOX_").upper(), c.name("ga")
    c.helper(f"class {cls}:\n    def __init__(self):\n        self.a = 2\n        self.b = 3")
    c.b.add_global(obj, ir.call(cls))
    name = c.choose(("'a'", "'b'"))
    lines = [f"{r} = getattr({obj}, {name}, 1) + int(hasattr({obj}, 'z'))",
             f"setattr({obj}, 'z', {r} % 5)",
             f"{r} = {r} + getattr({obj}, 'z', 0)"]
    if c.flag():
        lines.append(f"if hasattr({obj}, {name}):\n    delattr({obj}, {name})")
        lines.append(f"{r} = {r} + int(hasattr({obj}, {name}))")
    return Snip(lines, r, 20)


def _conversions(c: Ctx) -> Snip:
    (r,) = c.names("cv")
    d = c.dim()
    form = c.choose((f"int(float({d}) * 1.5) + int(str({d})) + len(str([1, 22]))",
                     f"int('1' + str({d})) + float('2.5') + int(bool(0)) + bool({d})",
                     f"int(-2.7) + int(True) + float({d}) / 4 + int('12', 8)",
                     f"len(repr({c.ints()})) + int(float('1e1'))"))
    return Snip([f"{r} = {form}"], r, 30)


def _round_divmod_pow(c: Ctx) -> Snip:
    q, m, r = c.names("q", "m", "rd")
    d = c.dim()
    form = c.choose((f"round({d} / 3) + round(2.675, 2) + round(-2.5) + round(7, -1)",
                     f"{q} * 2 + {m} + pow(2, {d}) + pow(3, 2, 5)",
                     f"abs({q} - {m}) + pow({d}, 2) % 7 + round(pow(2, -1), 1)",
                     f"divmod(7.5, 2)[1] + {q} + ({d} ** 2) // 3"))
    return Snip([f"{q}, {m} = divmod({c.ints()}[0] + 7, {d} + 1)", f"{r} = {form}"], r, 40)


def _chr_ord(c: Ctx) -> Snip:
    (r,) = c.names("co")
    d = c.dim()
    form = c.choose((f"ord(chr(65 + {d})) - 60", f"ord('a') - ord(chr(ord('A') + {d})) - 28",
                     f"len(chr(97) * {d}) + ord(str({d})[0]) - 48"))
    return Snip([f"{r} = {form}"], r, 20)


def _iter_next(c: Ctx) -> Snip:
    it, a, r = c.names("it", "a", "nx")
    L = c.ints()
    lines = [f"{it} = iter({L})", f"{a} = next({it})", f"{r} = {a} * 2 + next({it}) + next({it}, -1)"]
    if c.flag():
        lines.append(f"{r} = {r} + sum({it}) + next({it}, 4)")
    return Snip(lines, r, 3 * LIST_BOUND + LIST_SUM + 4)


def _slice_obj(c: Ctx) -> Snip:
    s, r = c.names("sl", "so")
    L = c.ints()
    t = c.tensor
    start = c.choose(("1", "None", "-2"))
    step = c.choose(("1", "2", "-1"))
    lines = [f"{s} = slice({start}, None, {step})",
             f"{r} = sum({L}[{s}]) + len(range(10)[{s}]) + sum({s}.indices(4)[1:])"]
    if t.shape and step != "-1" and c.flag():
        lines.append(f"{r} = {r} + {t.name}[{s}].shape[0]")
    return Snip(lines, r, LIST_SUM + 20 + 4)


def _truthiness(c: Ctx) -> Snip:
    (r,) = c.names("tr")
    L = c.ints()
    return Snip([f"{r} = int(bool([])) + 2 * int(bool({L})) + 4 * int(not {{}}) + 8 * int(bool((0,))) + "
                 f"(3 if {L} else 5) + (1 if set() else 2) + (1 if {{1: 2}} else 0)"], r, 25)


def _type_format(c: Ctx) -> Snip:
    # no builtin format(v, spec): Dynamo drops the spec (corpus/builtin_format_spec_ignored.py)
    (r,) = c.names("tf")
    d, t = c.dim(), c.tensor.name
    form = c.choose((f"int(type({d}) is int) + int(type({t}) is torch.Tensor) + len(type({c.ints()}).__name__)",
                     f"len('{{:03d}}'.format({d})) + len(hex({d} + 10)) + len(bin({d})) + len(oct(9)) + "
                     f"hash(({d}, 2)) % 5",
                     f"len('%d-%s' % ({d}, 'ab')) + len('{{:>4}}'.format({d})) + len(repr(1.5)) + "
                     f"len(ascii('a'))",
                     f"int(id({t}) == id({t})) + int(isinstance({d}, int)) + len(dir(slice)) % 3 + "
                     f"int(type(None) is not int)",
                     f"sum({t}.shape) + min({t}.shape, default=0) + max({t}.size(), default=1) + "
                     f"len(list(zip({t}.shape, {t}.shape, strict=True)))"))
    return Snip([f"{r} = {form}"], r, 40)


def _copy_modules(c: Ctx) -> Snip:
    a, r = c.names("cp", "cm")
    L = c.ints()
    which = c.choose(("copy", "deepcopy", "weakref", "inspect", "typing", "sys"))
    if which in ("copy", "deepcopy"):
        c.use_import("copy")
        lines = [f"{a} = copy.{which}([list({L}), {{'k': {c.dim()}}}])", f"{a}[0].append(1)",
                 f"{r} = len({a}[0]) + {a}[1]['k'] + len({L})"]
    elif which == "weakref":
        c.use_import("weakref")
        cls = c.name("Ref")
        c.helper(f"class {cls}:\n    pass")
        lines = [f"{a} = {cls}()", f"{a}.v = {c.dim()}",
                 f"{r} = weakref.ref({a})().v + int(weakref.ref({a})() is {a})"]
    elif which == "inspect":
        c.use_import("inspect")
        fn = c.name("_sig")
        c.helper(f"def {fn}(a, b=2, *args, k=3, **kw):\n    return a")
        lines = [f"{r} = len(inspect.signature({fn}).parameters) + int(inspect.isfunction({fn})) + "
                 f"int(callable({fn})) + {fn}({c.dim()})"]
    elif which == "typing":
        c.b.add_import(ir.ImportFrom("typing", ("cast", "Optional")))
        lines = [f"{a} = cast(int, {c.dim()})", f"{r} = {a} * 2 + int({a} is not None) + len(cast(list, {L}))"]
    else:
        c.use_import("sys")
        lines = [f"{r} = int(sys.version_info >= (3, 8)) + int(sys.maxsize > 2 ** 31) + "
                 f"len(sys.version_info[:2]) + int(torch.__version__ >= '2')"]
    return Snip(lines, r, 30)


def _number_methods(c: Ctx) -> Snip:
    (r,) = c.names("nb")
    d = c.dim()
    form = c.choose((f"({d} + 5).bit_length() + (2.5).as_integer_ratio()[1] + int((4.0).is_integer()) + "
                     f"int.from_bytes(b'\\x01\\x02', 'big') % 7",
                     f"abs(complex(3, {d})) + (1 + 2j).imag + (7).conjugate() + divmod(-7, 2)[0]",
                     f"int(float({d}).hex() == float({d}).hex()) + (-{d}).__abs__() + int({d}).__index__() + "
                     f"(3).__add__({d}) + float.fromhex('0x1p1')",
                     f"sum([0.5] * {d}) + min(1, 2.5) + max(-{d}, -0.5) + float('inf').__lt__(1) + "
                     f"int(float('nan') != float('nan'))"))
    return Snip([f"{r} = {form}"], r, 400)


def _abc_checks(c: Ctx) -> Snip:
    (r,) = c.names("ab")
    c.use_import("collections.abc")
    c.use_import("math")
    L, t = c.ints(), c.tensor.name
    sentinel = c.name("_MISSING_").upper()
    c.b.add_global(sentinel, ir.call("object"))
    return Snip([f"{r} = int(isinstance({L}, collections.abc.Sequence)) + 2 * int(isinstance({{}}, "
                 f"collections.abc.Mapping)) + 4 * int(isinstance(iter({L}), collections.abc.Iterator)) + "
                 f"int(isinstance({t}.shape, collections.abc.Sized)) + int(issubclass(list, collections.abc.Iterable)) "
                 f"+ int({{1: 2}}.get(3, {sentinel}) is {sentinel}) + int(getattr(math, 'pi', 0) > 3) + "
                 f"int(hasattr(torch, 'sin'))"], r, 20)


POOL = (_type_format, _copy_modules, _number_methods, _abc_checks,
        _len_abs, _min_max, _sum_start, _any_all, _sorted_reversed, _zip_enumerate, _map_filter, _range,
        _isinstance_callable, _attrs, _attrs_global, _conversions, _round_divmod_pow, _chr_ord, _iter_next,
        _slice_obj, _truthiness)


@fragment(FAMILY, FAMILY, "stdlib-builtins", weight=8)
def stdlib_builtins(draw, b: Builder) -> None:
    """Builtin functions folded into an output."""
    area(draw, b, POOL)
