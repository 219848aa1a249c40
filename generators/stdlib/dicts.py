"""Dict methods and the `collections` types: get/setdefault/pop/popitem/update/items/keys/values/copy/
clear/fromkeys, `|` and `|=`, dict(zip(...)), key-view set operations, iteration; defaultdict,
OrderedDict (move_to_end, popitem(last=)), Counter (most_common, arithmetic), deque (appendleft, rotate,
maxlen), namedtuple (_replace, _asdict) and ChainMap.

Values are folded in an order-sensitive way (`acc * 3 + v` over iteration), so a dict model that loses
insertion order shows as well as one that loses a value. Keys are ints or fixed strings; no set of
strings is ever iterated.
"""
from __future__ import annotations

from ..builder import Builder
from ..fragments import fragment
from .common import DIM_BOUND, FAMILY, LIST_BOUND, Ctx, Snip, area

ORDER_BOUND = 4000  # an order-sensitive fold of at most 6 small values


def _fold(d: str, acc: str) -> str:
    return f"for _k, _v in {d}.items():\n    {acc} = ({acc} * 3 + _v + len(str(_k))) % 997"


def _get_set(c: Ctx) -> Snip:
    d, r = c.names("dc", "dg")
    L, dim = c.ints(), c.dim()
    lines = [f"{d} = {{'a': {dim}, 'b': 2}}", f"{d}.setdefault('c', {L}[0])", f"{d}.setdefault('a', 7)",
             f"{d}['b'] += 1" if c.flag() else f"{d}.update({{'d': 5}}, b=4)",
             f"{r} = {d}.get('a') + {d}.get('z', 3) + {d}.pop('c') * 2 + {d}.pop('z', 1) + len({d})"]
    if c.flag():
        lines.append(_fold(d, r))
    return Snip(lines, r, ORDER_BOUND)


def _views(c: Ctx) -> Snip:
    d, e, r = c.names("dc", "de", "dv")
    L, M = c.ints(), c.ints()
    lines = [f"{d} = dict(zip({L}, range(10)))", f"{e} = {{v: v * 2 for v in {M}}}"]
    form = c.choose((f"len({d}.keys() & {e}.keys()) + sum(sorted({d}.keys() | {e}.keys())) + "
                     f"len({d}.keys() - {e}.keys())",
                     f"sum({d}.values()) + sum(k * v for k, v in {e}.items()) + int(3 in {d}) + "
                     f"list({d})[0] + list({e}.keys())[-1]",
                     f"sum(k for k in {d}) + int({d}.keys() == {e}.keys()) + len({d}.items() ^ {e}.items())"))
    return Snip(lines + [f"{r} = {form}"], r, 300)


def _merge(c: Ctx) -> Snip:
    d, e, r = c.names("dc", "dm", "dr")
    L, dim = c.ints(), c.dim()
    op = c.choose(("|", "|=", "copy-update", "fromkeys", "star"))
    lines = [f"{d} = {{1: {dim}, 2: 3}}"]
    if op == "|":
        lines.append(f"{e} = {d} | {{2: 4, 5: 1}}")
    elif op == "|=":
        lines += [f"{e} = {d}", f"{e} |= dict.fromkeys({L}, 1)"]
    elif op == "copy-update":
        lines += [f"{e} = {d}.copy()", f"{e}.update(zip({L}, {L}))", f"{d}.clear()"]
    elif op == "fromkeys":
        lines.append(f"{e} = dict.fromkeys(range({dim} + 1), 2)")
    else:
        lines.append(f"{e} = {{**{d}, 0: 9, **{{k: k for k in {L}}}}}")
    lines += [f"{r} = len({d}) + 0", _fold(e, r)]
    return Snip(lines, r, ORDER_BOUND)


def _popitem(c: Ctx) -> Snip:
    d, r = c.names("dc", "dp")
    L = c.ints()
    lines = [f"{d} = {{k: i for i, k in enumerate({L})}}", f"{d}[10] = 1", f"del {d}[{L}[0]]",
             f"{r} = sum({d}.popitem())", f"{r} = {r} * 2 + len({d}) + sum(reversed({d}.values()))"]
    return Snip(lines, r, 60)


def _defaultdict(c: Ctx) -> Snip:
    d, r = c.names("dd", "df")
    c.use_import("collections")
    L = c.ints()
    factory = c.choose(("int", "list", "lambda: 2"))
    body = f"{d}[a % 3] += 1" if factory != "list" else f"{d}[a % 3].append(a)"
    lines = [f"{d} = collections.defaultdict({factory})", f"for a in {L}:\n    {body}",
             f"{r} = len({d}) + int(7 in {d}) + " + (f"len({d}[7])" if factory == "list" else f"{d}[7]"), _fold(
                 f"{{k: (v if isinstance(v, int) else len(v)) for k, v in {d}.items()}}", r)]
    return Snip(lines, r, ORDER_BOUND)


def _ordered(c: Ctx) -> Snip:
    d, r = c.names("od", "oo")
    c.use_import("collections")
    L = c.ints()
    lines = [f"{d} = collections.OrderedDict((k, k * 2) for k in {L})", f"{d}[9] = 1",
             f"{d}.move_to_end({L}[0], last={c.flag()})",
             f"{r} = sum({d}.popitem(last={c.flag()}))", _fold(d, r)]
    if c.flag():
        lines.append(f"{r} = {r} + int({d} == collections.OrderedDict(reversed(list({d}.items()))))")
    return Snip(lines, r, ORDER_BOUND)


def _counter(c: Ctx) -> Snip:
    a, b, r = c.names("ct", "cu", "cn")
    c.use_import("collections")
    L, M = c.ints(), c.ints()
    form = c.choose((f"{a}.most_common(1)[0][1] + len({a} + {b}) + sum(({a} - {b}).values())",
                     f"sum(({a} & {b}).values()) * 2 + sum(({a} | {b}).values()) + {a}[100]",
                     f"sum({a}.values()) + {a}.total() + len(list({a}.elements()))"))
    lines = [f"{a} = collections.Counter({L})", f"{b} = collections.Counter({M})"]
    if c.flag():
        lines += [f"{a}.update({M})", f"{a}.subtract([{M}[0]])"]
    return Snip(lines + [f"{r} = {form}"], r, 60)


def _deque(c: Ctx) -> Snip:
    q, r = c.names("dq", "dr")
    c.use_import("collections")
    L, dim = c.ints(), c.dim()
    # rotate() on a bounded deque is left out: it loses maxlen (corpus/deque_maxlen_rotate_in_frame.py)
    maxlen = c.choose(("None", "3", "5"))
    lines = [f"{q} = collections.deque({L}, maxlen={maxlen})", f"{q}.appendleft({dim})", f"{q}.append(6)",
             f"{q}.rotate({c.choose(('1', '-2', '0'))})" if maxlen == "None" else f"{q}.extendleft([1, 2])",
             f"{r} = {q}[0] * 4 + {q}[-1] * 2 + len({q}) + {q}.popleft() + {q}.pop() + "
             f"int({q}.maxlen is None)"]
    return Snip(lines, r, 7 * LIST_BOUND + 2 * DIM_BOUND + 12)


def _namedtuple(c: Ctx) -> Snip:
    cls, p, r = c.name("Pair"), c.name("nt"), c.name("np")
    c.use_import("collections")
    c.helper(f"{cls} = collections.namedtuple({cls!r}, ['a', 'b'], defaults=[1])")
    dim = c.dim()
    lines = [f"{p} = {cls}({dim}, b={c.ints()}[0])", f"{p} = {p}._replace(a={p}.a + 1)"]
    form = c.choose((f"{p}.a * 3 + {p}[1] + sum({p}) + len({p}._fields)",
                     f"sum({p}._asdict().values()) + {cls}({dim}).b + {cls}._make([1, 2]).a",
                     f"(lambda a, b: a * 2 + b)(*{p}) + int({p} == ({p}.a, {p}.b))"))
    return Snip(lines + [f"{r} = {form}"], r, 5 * (DIM_BOUND + LIST_BOUND) + 10)


def _chainmap(c: Ctx) -> Snip:
    m, r = c.names("cm", "ch")
    c.use_import("collections")
    dim = c.dim()
    lines = [f"{m} = collections.ChainMap({{'a': {dim}}}, {{'a': 5, 'b': 2}})", f"{m}['c'] = 3",
             f"{r} = {m}['a'] * 2 + {m}['b'] + len({m}) + {m}.get('z', 4) + len({m}.maps) + "
             f"{m}.parents['a'] + len({m}.new_child({{'q': 1}}))"]
    return Snip(lines, r, 2 * DIM_BOUND + 30)


def _dict_misc(c: Ctx) -> Snip:
    d, r = c.names("dc", "dx")
    L, dim = c.ints(), c.dim()
    lines = [f"{d} = {{k: k * 3 % 5 for k in {L}}}", f"{d}[{dim}] = 9"]
    form = c.choose((f"max({d}, key={d}.get) + min({d}.values()) + list(reversed({d}))[0]",
                     f"sorted({d}.items(), key=lambda kv: (kv[1], kv[0]))[0][0] + int({d} == dict({d})) + "
                     f"int({d}.keys() <= set(range(10)))",
                     f"types.MappingProxyType({d})[{dim}] + len(types.MappingProxyType({d})) + "
                     f"int({dim} in types.MappingProxyType({d}))",
                     f"sum(v for k, v in sorted({d}.items())) + len(dict(sorted({d}.items(), reverse=True))) + "
                     f"int({d}.__contains__({dim})) + {d}.__getitem__({dim})"))
    if "types." in form:
        c.use_import("types")
    return Snip(lines + [f"{r} = {form}"], r, 80)


DICT_POOL = (_dict_misc, _get_set, _views, _merge, _popitem)
COLLECTIONS_POOL = (_defaultdict, _ordered, _counter, _deque, _namedtuple, _chainmap)


@fragment(FAMILY, FAMILY, "stdlib-dict", weight=8)
def stdlib_dict(draw, b: Builder) -> None:
    """Dict methods and views folded into an output."""
    area(draw, b, DICT_POOL)


@fragment(FAMILY, FAMILY, "stdlib-collections", weight=8)
def stdlib_collections(draw, b: Builder) -> None:
    """collections types folded into an output."""
    area(draw, b, COLLECTIONS_POOL)
