"""Layout (issue 14, construct 5): the call plan re-calls with the same shapes but other strides, and the
program's logic depends on the layout.

An input is passed contiguous on some calls and transposed, sliced with a step, expanded or
channels_last on others (either way round). The program reads `is_contiguous()` or `stride()`, takes
`.view()` only when the input is contiguous, or writes an `out=` target that keeps the input's odd
strides. A compiler that misses a stride or contiguity guard then reuses code specialised for the
first layout: a wrong number, or a `.view()` that raises only in the compiled run.
"""
from __future__ import annotations

from collections.abc import Callable
from math import prod

from .. import ir
from ..builder import Builder, linspace
from ..choose import boolean, choose, integer
from ..fragments import fragment

CONSTRUCT = "layout"
SHAPES_2D = ((3, 4), (4, 4), (2, 3))
SHAPES_4D = ((1, 2, 3, 2), (2, 3, 2, 2))


def _ramp(n: int, lo: float = -1.0, hi: float = 1.0) -> ir.Expr:
    return ir.call("torch.linspace", ir.Const(lo), ir.Const(hi), ir.Const(n), device=ir.Name("device"))


def _transposed(s: tuple[int, ...]) -> ir.Expr:
    return ir.method(ir.method(_ramp(prod(s)), "reshape", ir.Const(s[1]), ir.Const(s[0])), "t")


def _step(s: tuple[int, ...]) -> ir.Expr:
    doubled = ir.method(_ramp(2 * prod(s)), "reshape", ir.Const(2 * s[0]), ir.Const(s[1]))
    return ir.Sub(doubled, ir.Slice(None, None, ir.Const(2)))


def _expanded(s: tuple[int, ...]) -> ir.Expr:
    return ir.method(_ramp(s[1]), "expand", ir.Const(s[0]), ir.Const(s[1]))


def _channels_last(s: tuple[int, ...]) -> ir.Expr:
    return ir.method(linspace(s), "contiguous", memory_format=ir.dotted("torch.channels_last"))


LAYOUTS: dict[str, tuple[tuple[tuple[int, ...], ...], Callable[[tuple[int, ...]], ir.Expr]]] = {
    "transposed": (SHAPES_2D, _transposed),
    "step": (SHAPES_2D, _step),
    "expanded": (SHAPES_2D, _expanded),
    "channels-last": (SHAPES_4D, _channels_last),
}


# ---- logic that depends on the layout --------------------------------------------------------------


def _contiguous(draw, b: Builder, x: ir.Name, s: tuple[int, ...], layout: str) -> None:
    k = b.fresh("k")
    b.emit(ir.Assign(ir.Name(k), ir.IfExp(ir.method(x, "is_contiguous"), ir.Const(1), ir.Const(2))))
    b.returns.append(ir.Name(k))
    b.bind(b.fresh("t"), ir.BinOp(x, "*", ir.Name(k)), s, 2.0)


def _stride(draw, b: Builder, x: ir.Name, s: tuple[int, ...], layout: str) -> None:
    k = b.fresh("k")
    d = integer(draw, 0, len(s) - 1)
    b.emit(ir.Assign(ir.Name(k), ir.Sub(ir.method(x, "stride"), ir.Const(d))))
    b.returns.append(ir.Name(k))
    b.bind(b.fresh("t"), ir.BinOp(ir.call("torch.tanh", x), "*", ir.Name(k)), s, float(2 * prod(s)))


def _view(draw, b: Builder, x: ir.Name, s: tuple[int, ...], layout: str) -> None:
    """`.view()` only where it is legal; a compiled run that misses the layout change raises instead."""
    flat = ir.IfExp(ir.method(x, "is_contiguous"), ir.method(x, "view", ir.Const(-1)),
                    ir.BinOp(ir.method(x, "reshape", ir.Const(-1)), "+", ir.Const(1)))
    b.bind(b.fresh("t"), flat, (prod(s),), 2.0)


def _out(draw, b: Builder, x: ir.Name, s: tuple[int, ...], layout: str) -> None:
    """An `out=` target with the input's strides (`empty_like` preserves a dense layout), fully written."""
    o = b.fresh("o")
    b.emit(ir.Assign(ir.Name(o), ir.call("torch.empty_like", x)))
    fn = choose(draw, ("torch.sin", "torch.tanh", "torch.neg"))
    b.emit(ir.ExprStmt(ir.Call(ir.dotted(fn), (x,), (("out", ir.Name(o)),))))
    k = b.fresh("k")
    b.emit(ir.Assign(ir.Name(k), ir.Sub(ir.method(ir.Name(o), "stride"), ir.Const(0))))
    b.returns.append(ir.Name(k))
    b.bind(b.fresh("t"), ir.BinOp(ir.Name(o), "+", ir.Name(k)), s, float(1 + prod(s)))


LOGIC: dict[str, Callable[..., None]] = {"contiguous": _contiguous, "stride": _stride, "view": _view, "out": _out}


@fragment("resizes", CONSTRUCT, weight=2, nestable=False)
def layout_recall(draw, b):
    """An input re-passed with the same shape and other strides, read by layout-dependent logic."""
    layout = choose(draw, tuple(LAYOUTS))
    shapes, make_odd = LAYOUTS[layout]
    s = choose(draw, shapes)
    name = b.fresh("l")
    b.add_input(name, s)
    b.root.tensors.pop()  # private: another fragment must not resize it, nor write into an expanded tensor
    param = b.params[-1]
    odd = make_odd(s)
    if boolean(draw):  # odd layout first, contiguous on the re-call
        param.make, odd = odd, param.make
        b.tag("layout-odd-first")
    param.per_call[1] = odd
    b.calls = max(b.calls, 3)
    b.tag(f"layout-{layout}")
    logic = [k for k in LOGIC if k != "out" or layout != "expanded"]
    for _ in range(1 + integer(draw, 0, 1)):
        kind = choose(draw, logic)
        LOGIC[kind](draw, b, ir.Name(name), s, layout)
        b.tag(f"layout-{kind}")
