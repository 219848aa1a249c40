"""Builtins, functools, itertools, operator and collections applied to *tensors*: a list, tuple, dict or deque
of tensors summed, reduced, zipped, mapped, accumulated, enumerated or picked from, and tensors iterated
(`unbind`, `chunk`, `for row in x`).

With constant arguments Dynamo folds most of these calls to a constant; with tensors it has to trace them:
through its polyfills (`sum`, `functools.reduce`, `itertools.accumulate`...), its builtin handlers with
tensor arguments, and its models of containers holding tensors. Every snippet is one tensor expression of the
same shape as the tensor it starts from (or the row shape), never data-dependent (no tensor comparisons).
"""
from __future__ import annotations

from .. import ir
from ..builder import Builder
from ..choose import choose, integer
from ..fragments import fragment
from .common import FAMILY, bind_output, tensor_operand

IMPORTS = ("functools", "itertools", "operator", "collections")


def _list_forms(ts: str, a: str) -> list[tuple[str, float]]:
    """(expression, bound factor over the operand's bound) for a list `ts` of three tensors shaped like `a`:
    [a, a * 2, sin(a)], so a bound of 3 (times the operand's) covers any one of them, 4 any sum."""
    return [
        (f"sum({ts})", 4), (f"sum({ts}, start=torch.ones_like({a}))", 5), (f"sum({ts}[::2], {a})", 5),
        (f"functools.reduce(operator.add, {ts})", 4), (f"functools.reduce(torch.maximum, {ts}, {a})", 3),
        (f"functools.reduce(lambda u, v: u - v * 0.5, reversed({ts}))", 4),
        (f"max({ts}, key=lambda t: t.dim())", 3), (f"min(enumerate({ts}), key=lambda p: -p[0])[1]", 3),
        (f"torch.stack(list(reversed({ts}))).sum(0)", 4), (f"torch.stack(tuple({ts}), dim=0)[1]", 3),
        (f"dict(zip('abc', {ts}))['b']", 3), (f"{{i: t for i, t in enumerate({ts})}}[2]", 3),
        (f"collections.OrderedDict(zip(range(3), {ts})).popitem(last=False)[1]", 3),
        (f"collections.deque({ts}, maxlen=2)[0]", 3), (f"collections.deque({ts}).pop()", 3),
        (f"list(map(torch.neg, {ts}))[1]", 3), (f"list(map(operator.mul, {ts}, [1, 2, 3]))[2] / 3", 3),
        (f"list(filter(lambda t: t.dim() == {a}.dim(), {ts}))[-1]", 3),
        (f"list(itertools.accumulate({ts}))[-1]", 4), (f"list(itertools.accumulate({ts}, torch.minimum))[2]", 3),
        (f"sum(itertools.chain({ts}, [{a}]))", 5), (f"next(itertools.islice({ts}, 1, None))", 3),
        (f"sum(p * 0.25 + q for p, q in zip({ts}, {ts}[1:]))", 9),
        (f"sum(i * t for i, t in enumerate({ts}, 1)) / 6", 3),
        (f"sum(p - q for p, q in itertools.combinations({ts}, 2))", 9),
        (f"sum(p * 0.5 for p, _ in itertools.product({ts}, range(2)))", 4),
        (f"operator.itemgetter(1)({ts}) + operator.getitem({ts}, -1)", 4),
        (f"operator.methodcaller('clamp', -1, 1)({ts}[1])", 1),
        (f"functools.partial(torch.add, alpha=0.5)({ts}[0], {ts}[1])", 3),
        (f"sorted({ts}, key=lambda t: t.numel())[0] + len({ts})", 4),
        (f"[*{ts}, {a}][-1] * (len({ts}) + {ts}.count(None))", 4),
        (f"tuple({ts})[::-1][0] + ({ts} + [{a}])[3]", 4),
    ]


def _iter_forms(a: str, shape: tuple[int, ...]) -> list[tuple[str, float, tuple[int, ...]]]:
    """Iterating a tensor: (expression, bound factor, result shape); only for tensors with a first dim."""
    rows = shape[1:]
    n = shape[0]
    return [
        (f"sum({a}.unbind(0))", n, rows), (f"torch.stack([r * i for i, r in enumerate({a})])", n, shape),
        (f"torch.cat({a}.chunk(2))", 1, shape), (f"torch.cat(list(reversed({a}.split(1))))", 1, shape),
        (f"functools.reduce(operator.add, {a})", n, rows), (f"max(list({a}), key=lambda r: r.dim()) * {n}", n, rows),
        (f"dict(enumerate({a}.unbind()))[{n - 1}]", 1, rows), (f"list(zip({a}, {a}))[0][1]", 1, rows),
    ]


@fragment(FAMILY, FAMILY, "stdlib-tensor-containers", weight=8)
def stdlib_tensor_containers(draw, b: Builder) -> None:
    """A container of tensors folded by a builtin, functools, itertools, operator or collections call."""
    for module in IMPORTS:
        b.add_import(ir.Import(module))
    var, a, bound = tensor_operand(draw, b)
    if var.shape and var.shape[0] > 1 and integer(draw, 0, 3) == 0:
        text, factor, shape = choose(draw, _iter_forms(a, var.shape))
    else:
        ts = b.fresh("ts")
        b.emit(ir.Code(f"{ts} = [{a}, {a} * 2, torch.sin({a})]"))
        text, factor = choose(draw, _list_forms(ts, a))
        shape = var.shape
    bind_output(b, "tc", text, shape, max(bound, 1.0) * factor + 6)
