"""List, tuple and set methods over small int lists: append/extend/insert/pop/remove/index/count/sort/
reverse/copy/clear, repetition, concatenation, stepped slices, comparisons and membership; tuple methods;
sets and frozensets of ints (never of strings: their iteration order changes between processes).

Dynamo keeps its own model of each list and set it builds in the frame (`variables/lists.py`,
`variables/sets.py`); every method here updates that model, and the value read back exposes a wrong one.
"""
from __future__ import annotations

from ..builder import Builder
from ..fragments import fragment
from .common import DIM_BOUND, FAMILY, LIST_BOUND, LIST_SUM, Ctx, Snip, area


def _grow(c: Ctx) -> Snip:
    a, r = c.names("ls", "lg")
    L, M, d = c.ints(), c.ints(), c.dim()
    lines = [f"{a} = list({L})", f"{a}.append({d})", f"{a}.extend({M})" if c.flag() else f"{a} += {M}",
             f"{a}.insert({c.choose(('0', '1', '-1', '10'))}, 6)"]
    return Snip(lines + [f"{r} = len({a}) + {a}[0] * 2 + {a}[-1] + {a}.count(6)"], r, 12 + 3 * LIST_BOUND + 6)


def _shrink(c: Ctx) -> Snip:
    a, r = c.names("ls", "lp")
    L = c.ints()
    lines = [f"{a} = list({L}) + [9]", f"{r} = {a}.pop() + {a}.pop(0) * 2",
             f"{a}.remove({a}[-1])" if c.flag() else f"del {a}[1:]",
             f"{r} = {r} + len({a}) + sum({a})"]
    if c.flag():
        lines += [f"{a}.clear()", f"{r} = {r} + len({a}) + int(not {a})"]
    return Snip(lines, r, 9 + 2 * LIST_BOUND + 4 + LIST_SUM + 1)


def _index_count(c: Ctx) -> Snip:
    (r,) = c.names("ix")
    L = c.ints()
    form = c.choose((f"{L}.index({L}[-1]) + {L}.count({L}[0]) * 3",
                     f"list({L}).index({L}[1], 1) + int({L}[0] in {L}) + int(99 not in {L})",
                     f"tuple({L}).index({L}[-1]) + tuple({L}).count(3) + len(tuple({L}) + (1, 2))"))
    return Snip([f"{r} = {form}"], r, 20)


def _sort_reverse(c: Ctx) -> Snip:
    a, b, r = c.names("ls", "cp", "so")
    L = c.ints()
    key = c.choose(("lambda a: -a", "lambda a: (a % 3, -a)", "abs"))
    lines = [f"{a} = list({L})", f"{b} = {a}.copy()" if c.flag() else f"{b} = {a}[:]",
             f"{a}.sort(key={key})" if c.flag() else f"{a}.sort(reverse=True)", f"{b}.reverse()",
             f"{r} = {a}[0] * 4 + {b}[0] * 2 + {a}[-1] + int({a} == sorted({b}))"]
    return Snip(lines, r, 7 * LIST_BOUND + 1)


def _repeat_concat(c: Ctx) -> Snip:
    (r,) = c.names("rc")
    L, M, d = c.ints(), c.ints(), c.dim()
    L, M = f"list({L})", f"list({M})"
    form = c.choose((f"len({L} * 2 + {M}) + ([0] * {d}).count(0)",
                     f"len(tuple({L}) * {d}) + (tuple({L}) + tuple({M}))[-1]",
                     f"sum(({L} + {M})[::2]) + sum({L}[::-1][:2]) + sum({M}[1::{c.choose(('2', '3'))}])",
                     f"len([*{L}, *{M}, {d}]) + sum((*{L}, 1)[-2:])"))
    return Snip([f"{r} = {form}"], r, 8 * DIM_BOUND + 2 * LIST_SUM + 12)


def _compare(c: Ctx) -> Snip:
    (r,) = c.names("cm")
    L, M = c.ints(), c.ints()
    return Snip([f"{r} = int(list({L}) < list({M})) + 2 * int(list({L}) == list({M})) + 4 * int(tuple({L}) >= (2,)) + "
                 f"8 * int([1, 2] <= [1, 2, 0]) + 16 * int((1, 3) > (1, 2, 9)) + int({L} != {M})"], r, 32)


def _tuple_methods(c: Ctx) -> Snip:
    a, r = c.names("tp", "tm")
    L, d = c.ints(), c.dim()
    lines = [f"{a} = tuple({L}) + ({d}, {d})", f"{r} = {a}.count({d}) + {a}.index({d}) + len({a}[::2]) + "
             f"{a}[-3] + int({a}[:1] == tuple({L})[:1]) + hash(({d}, 1)) % 3"]
    return Snip(lines, r, 6 + 6 + 3 + LIST_BOUND + 4)


def _set_ops(c: Ctx) -> Snip:
    a, b, r = c.names("st", "su", "sr")
    L, M, d = c.ints(), c.ints(), c.dim()
    lines = [f"{a} = set({L})", f"{a}.add({d})", f"{a}.discard(0)", f"{b} = {{a % 4 for a in {M}}}"]
    form = c.choose((f"sum({a} | {b}) + len({a} & {b}) * 10 + sum(sorted({a} - {b})[:1])",
                     f"len({a}.union({b})) + len({a}.intersection({M})) + sum({a}.difference({b})) + "
                     f"sum({a}.symmetric_difference({b}))",
                     f"int({b}.issubset({a})) + int({a}.issuperset({b})) + int({a}.isdisjoint({{100}})) + "
                     f"sorted({a})[-1] + len({a} ^ {b})"))
    if c.flag():
        lines += [f"{a}.update({b})", f"{a}.remove(min({a}))", f"{a} -= {{1}}", f"{a} |= {{2}}"]
    return Snip(lines + [f"{r} = {form}"], r, 2 * (LIST_SUM + DIM_BOUND + 8) + 50)


def _frozenset(c: Ctx) -> Snip:
    a, r = c.names("fs", "fr")
    L, M = c.ints(), c.ints()
    lines = [f"{a} = frozenset({L})",
             f"{r} = len({a} | frozenset({M})) + int(3 in {a}) + sum(sorted({a} & set({M}))) + "
             f"len({{frozenset((1, 2)): 1, frozenset((2, 1)): 2}}) + int({a} == frozenset(sorted({L})))"]
    return Snip(lines, r, 10 + LIST_SUM + 4)


def _heapq_bisect(c: Ctx) -> Snip:
    h, r = c.names("hp", "hq")
    c.use_import("heapq")
    c.use_import("bisect")
    L, d = c.ints(), c.dim()
    lines = [f"{h} = list({L})", f"heapq.heapify({h})", f"heapq.heappush({h}, {d})",
             f"{r} = heapq.heappop({h}) * 3 + heapq.nsmallest(2, {L})[-1] + heapq.nlargest(1, {L})[0] + "
             f"bisect.bisect_left(sorted({L}), 3) + bisect.bisect_right(sorted({L}), {d}) + len({h})"]
    if c.flag():
        lines.append(f"bisect.insort({h}, 4)")
        lines.append(f"{r} = {r} + heapq.heappushpop({h}, 1) + {h}.index(4)")
    return Snip(lines, r, 3 * DIM_BOUND + 3 * LIST_BOUND + 20)


SEQ_POOL = (_heapq_bisect, _grow, _shrink, _index_count, _sort_reverse, _repeat_concat, _compare, _tuple_methods)
SET_POOL = (_set_ops, _frozenset)


@fragment(FAMILY, FAMILY, "stdlib-list", weight=8)
def stdlib_list(draw, b: Builder) -> None:
    """List and tuple methods folded into an output."""
    area(draw, b, SEQ_POOL)


@fragment(FAMILY, FAMILY, "stdlib-set", weight=8)
def stdlib_set(draw, b: Builder) -> None:
    """Sets and frozensets of ints folded into an output."""
    area(draw, b, SET_POOL, most=2)
