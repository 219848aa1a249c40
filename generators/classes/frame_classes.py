"""Class forms the rest of the family never draws, reached by no 1,000-case default-mix campaign on torch 2.13:
a `typing.NamedTuple`'s fields read through the class's own descriptors (`Q.b.__get__(q)`, what attribute
lookup does under the hood; Dynamo models the descriptor as a tracker of its own), an object whose
`__class__` is reassigned in the frame (Dynamo breaks the graph there), a subclass of a `namedtuple` with a
method and `_replace`, and an instance made by `object.__new__` whose attributes the frame sets itself.
"""
from __future__ import annotations

from .. import ir
from ..builder import Builder
from ..choose import choose
from ..fragments import fragment
from .common import FAMILY, emit, helper, operand, place, result, where


@fragment(FAMILY, "classes", "frame-classes", weight=5)
def frame_classes(draw, b: Builder) -> None:
    """One class form: NamedTuple field descriptors, `__class__` reassignment, a namedtuple subclass, or an
    instance made by `object.__new__`."""
    t, var, bound = operand(draw, b)
    kind = choose(draw, ("descriptor", "descriptor", "class-swap", "namedtuple-subclass", "bare-new"))
    if kind == "descriptor":
        cls = b.fresh("Rec")
        helper(b, """
            class $C(typing.NamedTuple):
                first: torch.Tensor
                scale: float = 2.0
                shift: int = 3
            """, C=cls)
        _import(b, "typing")
        q = place(b, where(draw, b), f"{cls}(torch.ones({tuple(var.shape)!r}), {choose(draw, (0.5, 1.5, -2.0))})",
                  "rec")
        field = choose(draw, ("scale", "shift"))
        result(b, f"{t} * {cls}.{field}.__get__({q}, {cls}) + {cls}.first.__get__({q}) * {q}.scale",
               var.shape, 4 * bound + 4)
    elif kind == "class-swap":
        one, two = b.fresh("Mode"), b.fresh("Mode")
        helper(b, """
            class $A:
                def __init__(self, k):
                    self.k = k
                def apply(self, t):
                    return t * self.k
            """, A=one)
        helper(b, """
            class $B($A):
                def apply(self, t):
                    return t + self.k
            """, A=one, B=two)
        o = b.fresh("mode")
        emit(b, "$o = $A($k)", o=o, A=one, k=choose(draw, (2, 3)))
        emit(b, "$o.__class__ = $B", o=o, B=two)
        result(b, f"{o}.apply({t}) + isinstance({o}, {two})", var.shape, bound + 4)
    elif kind == "namedtuple-subclass":
        cls = b.fresh("Pair")
        _import(b, "collections")
        helper(b, """
            class $C(collections.namedtuple("${C}Base", "a b")):
                __slots__ = ()
                def combined(self):
                    return self.a * self.b
            """, C=cls)
        p = b.fresh("pair")
        emit(b, "$p = $C($t, $k)._replace(b=$k2)", p=p, C=cls, t=t, k=choose(draw, (2, 3)),
             k2=choose(draw, (0.5, 4)))
        result(b, f"{p}.combined() + {p}.b + len({p})", var.shape, 4 * bound + 8)
    else:
        cls = b.fresh("Bare")
        helper(b, """
            class $C:
                def __init__(self):
                    self.k = 100
                def apply(self, t):
                    return t * self.k
            """, C=cls)
        o = b.fresh("bare")
        emit(b, "$o = object.__new__($C)", o=o, C=cls)
        emit(b, "$o.k = $k", o=o, k=choose(draw, (2, -1)))
        result(b, f"{o}.apply({t})", var.shape, 2 * bound)


def _import(b: Builder, module: str) -> None:
    b.add_import(ir.Import(module))
