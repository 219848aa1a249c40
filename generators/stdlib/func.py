"""functools, itertools, operator and math over small int lists and tensor metadata.

Dynamo inlines most of these through polyfills (`polyfills/itertools.py`, `polyfills/functools.py`) or
models them as special variables (`functools.partial`, `lru_cache`-wrapped functions, `operator`
callables, `math` constant folding); each snippet folds what it computes into an output.
"""
from __future__ import annotations

from ..builder import Builder
from ..fragments import fragment
from .common import DIM_BOUND, FAMILY, LIST_BOUND, LIST_SUM, Ctx, Snip, area


def _partial(c: Ctx) -> Snip:
    p, r = c.names("pt", "pr")
    c.use_import("functools")
    L, d = c.ints(), c.dim()
    form = c.choose(("positional", "keyword", "override", "nested", "builtin"))
    if form == "override":
        lines = [f"{p} = functools.partial(lambda a, k=1: a * 3 + k, k={d} * 2 + 1)",
                 f"{r} = {p}({L}[0], k=2) + {p}(1)"]
    elif form == "positional":
        lines = [f"{p} = functools.partial(lambda a, b, k=1: a * 2 + b * k, {d})", f"{r} = {p}({L}[0], k=2)"]
    elif form == "keyword":
        lines = [f"{p} = functools.partial(lambda a, b=0, k=1: a + b * k, k={L}[-1])",
                 f"{r} = {p}(1, b={d}) + {p}(2, b=1, k=0)"]
    elif form == "nested":
        # .args of a nested partial is left unread: Dynamo does not flatten it (corpus/partial_nested_args.py)
        q = c.name("pq")
        lines = [f"{p} = functools.partial(functools.partial(max, {d}), 3)",
                 f"{q} = functools.partial(min, {d}, key=abs)",
                 f"{r} = {p}({L}[0]) + {q}(5) + len({q}.args) + len({q}.keywords)"]
    else:
        lines = [f"{p} = functools.partial(int, base=2)", f"{r} = {p}('101') + {p}(str({d} % 2))"]
    return Snip(lines, r, 3 * LIST_BOUND + 3 * DIM_BOUND + 10)


def _reduce(c: Ctx) -> Snip:
    (r,) = c.names("rd")
    c.use_import("functools")
    L, d = c.ints(), c.dim()
    form = c.choose((f"functools.reduce(lambda a, b: a * 2 + b, {L})",
                     f"functools.reduce(lambda a, b: a + b, {L}, {d})",
                     f"functools.reduce(max, map(abs, {L}))"))
    return Snip([f"{r} = {form}"], r, 16 * LIST_SUM + DIM_BOUND)


def _wraps(c: Ctx) -> Snip:
    inner, deco, r = c.name("_plain"), c.name("_twice"), c.name("wr")
    c.use_import("functools")
    c.helper(f"def {inner}(a, b=1):\n    \"\"\"doc\"\"\"\n    return a * 2 + b")
    c.helper(f"def {deco}(fn):\n    @functools.wraps(fn)\n    def wrapper(*args, **kwargs):\n"
             f"        return fn(*args, **kwargs) + 1\n    return wrapper")
    w = c.name("wp")
    return Snip([f"{w} = {deco}({inner})",
                 f"{r} = {w}({c.dim()}, b={c.ints()}[0]) + len({w}.__name__) + int({w}.__wrapped__ is {inner})"],
                r, 2 * DIM_BOUND + LIST_BOUND + 20)


def _lru_cache(c: Ctx) -> Snip:
    fn, r = c.name("_cached"), c.name("lc")
    c.use_import("functools")
    dec = c.choose(("functools.lru_cache(maxsize=None)", "functools.lru_cache", "functools.cache"))
    c.helper(f"@{dec}\ndef {fn}(n):\n    return n * n + 1")
    return Snip([f"{r} = {fn}({c.dim()}) + {fn}(3)"], r, DIM_BOUND * DIM_BOUND + 11)


def _chains(c: Ctx) -> Snip:
    (r,) = c.names("ic")
    c.use_import("itertools")
    L, M = c.ints(), c.ints()
    form = c.choose((f"sum(itertools.chain({L}, {M}, (1,)))",
                     f"len(list(itertools.chain.from_iterable([{L}, {M}])))",
                     f"sum(itertools.islice({L}, 1, None, 2)) + len(list(itertools.islice({M}, 2)))",
                     f"sum(a * b for a, b in itertools.zip_longest({L}, {M}, fillvalue=2))",
                     f"sum(itertools.repeat({L}[0], 3)) + len(list(itertools.repeat(1, 2)))",
                     f"sum(a * b for a, b in itertools.pairwise({L}))"))
    return Snip([f"{r} = {form}"], r, 4 * LIST_BOUND * LIST_BOUND)


def _combinatorics(c: Ctx) -> Snip:
    (r,) = c.names("cb")
    c.use_import("itertools")
    L, d = c.ints(), c.dim()
    form = c.choose((f"len(list(itertools.product({L}, range(2)))) + "
                     f"sum(a * b for a, b in itertools.product({L}, {L}))",
                     f"sum(a - b for a, b in itertools.combinations({L}, 2)) + "
                     f"len(list(itertools.combinations(range({d}), 2)))",
                     f"sum(p[0] * 2 + p[-1] for p in itertools.permutations({L}, 2))",
                     f"len(list(itertools.product((0, 1), repeat=2))) + "
                     f"len(list(itertools.combinations_with_replacement({L}, 2)))"))
    return Snip([f"{r} = {form}"], r, 16 * LIST_BOUND * LIST_BOUND + 20)


def _accumulate_count(c: Ctx) -> Snip:
    (r,) = c.names("ac")
    c.use_import("itertools")
    c.use_import("operator")
    L, d = c.ints(), c.dim()
    form = c.choose((f"list(itertools.accumulate({L}))[-1] + list(itertools.accumulate({L}, max))[1]",
                     f"list(itertools.accumulate({L}, operator.mul, initial=1))[2]",
                     f"sum(itertools.islice(itertools.count({d}, 2), 3))",
                     f"sum(itertools.islice(itertools.cycle({L}), 5))",
                     f"sum(k * len(list(g)) for k, g in itertools.groupby(sorted({L})))",
                     f"len(list(itertools.takewhile(lambda a: a > 0, {L}))) + "
                     f"len(list(itertools.dropwhile(lambda a: a < 3, {L}))) + "
                     f"sum(itertools.compress({L}, [1, 0, 1]))"))
    return Snip([f"{r} = {form}"], r, 5 * LIST_BOUND * LIST_BOUND + 20)


def _operator(c: Ctx) -> Snip:
    (r,) = c.names("op")
    c.use_import("operator")
    L, M, d = c.ints(), c.ints(), c.dim()
    form = c.choose((f"operator.add({d}, 2) + operator.mul({L}[0], 3) + operator.neg({L}[-1])",
                     f"sum(operator.itemgetter(0, -1)({L})) + operator.itemgetter(1)({M})",
                     f"operator.getitem({L}, 1) + operator.index({d}) + operator.floordiv(7, 2) + operator.mod({d}, 3)",
                     f"operator.methodcaller('count', {L}[0])({L}) + operator.methodcaller('index', {L}[0])({L})",
                     f"sum(sorted({L}, key=operator.neg)[:2]) + int(operator.lt({d}, 3)) + operator.sub(5, {d})",
                     f"operator.attrgetter('ndim')({c.tensor.name}) + operator.truth({L}) + "
                     f"operator.contains({L}, 3) + operator.pow({d}, 2)"))
    return Snip([f"{r} = {form}"], r, 4 * LIST_BOUND + 3 * DIM_BOUND + DIM_BOUND * DIM_BOUND + 10)


def _math(c: Ctx) -> Snip:
    (r,) = c.names("mt")
    c.use_import("math")
    L, d = c.ints(), c.dim()
    form = c.choose((f"math.sqrt({d} + 1) + math.floor(2.7) + math.ceil({d} / 3) + math.pi",
                     f"math.log({d} + 1) + math.exp(-{d}) + int(math.isclose(0.1 + 0.2, 0.3))",
                     f"math.prod({L}) % 11 + math.gcd({L}[0], 6) + math.fsum([0.1] * 10)",
                     f"math.trunc(-{d} / 2) + math.copysign(1.5, -{d}) + math.fabs(-{d}) + math.e",
                     f"math.log2(8) + math.hypot(3, {d}) + int(math.isfinite({d})) + math.comb(5, 2) % 4",
                     f"math.cos(math.pi * {d}) + math.atan2(1, {d} + 1) + math.radians(180) + math.factorial(3)"))
    return Snip([f"{r} = {form}"], r, 40)


def _more_iter(c: Ctx) -> Snip:
    (r,) = c.names("mi")
    c.use_import("itertools")
    c.use_import("functools")
    L, M = c.ints(), c.ints()
    form = c.choose((f"sum(itertools.starmap(pow, zip({L}, [2, 1, 1, 1])))",
                     f"len(list(itertools.filterfalse(lambda a: a % 2, {L}))) + sum(next(itertools.tee({M}, 2)[1]) "
                     f"for _ in range(1))",
                     f"sorted({L}, key=functools.cmp_to_key(lambda a, b: b - a))[0] + sum(zip(*[{L}, {M}]).__next__())",
                     "sum(itertools.islice(itertools.count(0.5, 0.25), 3)) + len(list(zip(*[[1, 2], [3, 4]])))"))
    return Snip([f"{r} = {form}"], r, 3 * LIST_BOUND * LIST_BOUND + 20)


def _more_operator(c: Ctx) -> Snip:
    a, r = c.names("ol", "om")
    c.use_import("operator")
    c.use_import("math")
    L, d = c.ints(), c.dim()
    lines = [f"{a} = list({L})", f"operator.setitem({a}, 0, {d})", f"{a} = operator.iadd({a}, [1])",
             f"operator.delitem({a}, -1)"]
    form = c.choose((f"{a}[0] + len(operator.concat({a}, [2])) + int(operator.is_({a}, {a})) + "
                     f"int(operator.not_({a})) + operator.abs(-{d}) + operator.length_hint({a})",
                     f"math.isqrt({d} + 8) + math.lcm({a}[0] + 1, 4) % 5 + math.remainder(7, 3) + "
                     f"math.ldexp(0.5, 2) + math.frexp(8.0)[1] + math.modf(2.5)[0] + math.dist((0, 0), (3, {d}))"))
    return Snip(lines + [f"{r} = {form}"], r, 60)


FUNCTOOLS_POOL = (_partial, _reduce, _wraps, _lru_cache)
ITERTOOLS_POOL = (_chains, _combinatorics, _accumulate_count, _more_iter)
OPERATOR_POOL = (_operator, _math, _more_operator)


@fragment(FAMILY, FAMILY, "stdlib-functools", weight=8)
def stdlib_functools(draw, b: Builder) -> None:
    """functools.partial, reduce, wraps and lru_cache folded into an output."""
    area(draw, b, FUNCTOOLS_POOL, most=2)


@fragment(FAMILY, FAMILY, "stdlib-itertools", weight=8)
def stdlib_itertools(draw, b: Builder) -> None:
    """itertools iterators folded into an output."""
    area(draw, b, ITERTOOLS_POOL)


@fragment(FAMILY, FAMILY, "stdlib-operator-math", weight=8)
def stdlib_operator_math(draw, b: Builder) -> None:
    """operator functions and math folded into an output."""
    area(draw, b, OPERATOR_POOL)
