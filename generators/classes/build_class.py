"""Classes defined inside the compiled frame, traced by Dynamo itself (`enable_trace_load_build_class`).

By default a `class` statement in the frame is a graph break; with the setting (off in torch 2.13 and 2.14,
documented as "Enable tracing LOAD_BUILD_CLASS bytecode") Dynamo runs the class body at trace time and models
the class and its instances. The methods' closures then have to keep sharing the frame's cells, their writes to
`self` must be replayed, `super()` must follow the instance's MRO. One `build-class` fragment draws one class
(or a small hierarchy) of one kind:
- `build-class-attrs`: class attributes read through `self`, an instance attribute written by a method (twice
  when the method is called twice), a class attribute shadowed by an instance write;
- `build-class-cells`: methods closing over cells of the frame (a number, a tuple, a nested helper function);
- `build-class-super`: `super().__init__()` and `super().m()` in a subclass, or in a diamond of mixins whose
  results are combined in an order-dependent way, so the MRO shows in the value;
- `build-class-class-write`: a method writes a class attribute through `type(self)` (a graph break today);
- `build-class-captured`: a method appends to a list or sets a key of a dict captured from the frame, or reads a
  frame cell rebound (or a container mutated) after the class statement: what torch 2.13 and 2.14.1 get wrong
  (the class body's cells are snapshotted when the class is built), two draws of nine.
The fragments belong to the opt-in `frontier` family (`--family frontier`): the setting is not a default of
torch, and the default mix stays as it was.
"""
from __future__ import annotations

from ..builder import Builder
from ..choose import boolean, choose
from ..fragments import fragment
from .common import emit, operand, result

FAMILY = "frontier"
SETTING = {"enable_trace_load_build_class": True}
KINDS = ("attrs", "attrs", "cells", "cells", "super", "super", "class-write", "captured", "captured")


@fragment(FAMILY, "build-class", weight=3, nestable=False)
def build_class(draw, b: Builder) -> None:
    """One class statement in the frame, compiled with Dynamo tracing the class body."""
    b.dynamo_config.update(SETTING)
    kind = choose(draw, KINDS)
    b.tag(f"build-class-{kind}")
    t, var, bound = operand(draw, b)
    {"attrs": _attrs, "cells": _cells, "super": _super, "class-write": _class_write,
     "captured": _captured}[kind](draw, b, t, var.shape, bound)


def _attrs(draw, b: Builder, t: str, shape, bound: float) -> None:
    cls, obj = b.fresh("Acc"), b.fresh("acc")
    scale, step = choose(draw, (2, 3, 0.5)), choose(draw, (1, 4))
    emit(b, """
        class $C:
            scale = $scale
            step = $step
            def __init__(self, t):
                self.t = t
                self.n = 1
            def bump(self):
                self.n = self.n * 2 + self.step
                self.scale = self.scale + 1
                return self
            def value(self):
                return self.t * self.scale + self.n
        """, C=cls, scale=scale, step=step)
    calls = ".bump()" * choose(draw, (1, 2))
    emit(b, f"{obj} = {cls}({t}){calls}")
    result(b, f"{obj}.value() + {cls}.scale + {obj}.n", shape, bound * 8 + 40)


def _cells(draw, b: Builder, t: str, shape, bound: float) -> None:
    cls, k, pair, helper = b.fresh("Near"), b.fresh("k"), b.fresh("pair"), b.fresh("shift")
    emit(b, f"{k} = {choose(draw, (2, 3, -1))}")
    emit(b, f"{pair} = ({choose(draw, (1, 5))}, {choose(draw, (0.5, 2.0))})")
    emit(b, """
        def $h(u):
            return u + $k
        """, h=helper, k=k)
    emit(b, """
        class $C:
            def m(self, u):
                return $h(u * $k) - $p[0]
            def n(self, u):
                return u * $p[1] + len($p)
        """, C=cls, h=helper, k=k, p=pair)
    obj = b.fresh("near")
    emit(b, f"{obj} = {cls}()")
    result(b, f"{obj}.m({t}) + {obj}.n({t})", shape, bound * 8 + 16)


def _super(draw, b: Builder, t: str, shape, bound: float) -> None:
    if boolean(draw):
        base, sub = b.fresh("Base"), b.fresh("Sub")
        emit(b, """
            class $B:
                def __init__(self, k):
                    self.k = k
                    self.calls = 0
                def m(self, u):
                    self.calls = self.calls + 1
                    return u * self.k
            """, B=base)
        emit(b, """
            class $S($B):
                def __init__(self):
                    super().__init__($k)
                    self.k = self.k + 1
                def m(self, u):
                    return super().m(u) - self.calls
            """, B=base, S=sub, k=choose(draw, (2, 3)))
        obj = b.fresh("sub")
        emit(b, f"{obj} = {sub}()")
        result(b, f"{obj}.m({t}) + {obj}.m({t}) * {obj}.calls", shape, bound * 20 + 8)
        return
    names = [b.fresh(p) for p in ("Root", "Left", "Right", "Both")]
    emit(b, """
        class $A:
            def g(self):
                self.depth = 1
                return 1
        """, A=names[0])
    for name, k in ((names[1], 2), (names[2], 3)):
        emit(b, """
            class $M($A):
                def g(self):
                    v = super().g()
                    self.depth = self.depth + 1
                    return v * $k + 1
            """, M=name, A=names[0], k=k)
    emit(b, """
        class $D($L, $R):
            def g(self):
                return super().g() * 10 + self.depth
        """, D=names[3], L=names[1], R=names[2])
    result(b, f"{t} * {names[3]}().g()", shape, bound * 120)


def _class_write(draw, b: Builder, t: str, shape, bound: float) -> None:
    cls, obj = b.fresh("Count"), b.fresh("count")
    emit(b, """
        class $C:
            total = 0
            def add(self, v):
                type(self).total = type(self).total + v
                return self
        """, C=cls)
    emit(b, f"{obj} = {cls}().add({choose(draw, (1, 2))}).add(3)")
    result(b, f"{t} * {cls}.total + {obj}.total", shape, bound * 5 + 5)


def _captured(draw, b: Builder, t: str, shape, bound: float) -> None:
    cls, obj = b.fresh("Keep"), b.fresh("keep")
    form = choose(draw, ("list", "dict", "rebound", "mutated-after"))
    b.tag(f"build-class-captured-{form}")
    box = b.fresh("box")
    if form in ("list", "mutated-after"):
        emit(b, f"{box} = [1]")
    elif form == "dict":
        emit(b, f'{box} = {{"a": 1}}')
    else:
        emit(b, f"{box} = 2")
    write = {"list": f"{box}.append(v)", "dict": f'{box}["b"] = v', "rebound": "pass",
             "mutated-after": "pass"}[form]
    size = f"{box}" if form == "rebound" else f"len({box})"
    emit(b, """
        class $C:
            def put(self, v):
                $write
                return self
            def size(self):
                return $size
        """, C=cls, write=write, size=size)
    if form == "rebound":
        emit(b, f"{box} = 5")
    elif form == "mutated-after":
        emit(b, f"{box}.append(7)")
    emit(b, f"{obj} = {cls}().put({choose(draw, (3, 4))})")
    result(b, f"{t} * {obj}.size() + {size}", shape, bound * 5 + 5)
