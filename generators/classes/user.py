"""User-defined classes at module level and in the frame: methods calling methods, properties with
setters, classmethods and staticmethods, class attributes shadowed by instance attributes, inheritance
with `super()`, mixins resolved through the MRO, `isinstance` across a call plan that swaps the class,
and a class statement inside the entry itself.

Dynamo models such objects as `UserDefinedObjectVariable`s and inlines their methods; these fragments
make it walk method lookup, `super()` resolution and attribute mutation of pre-existing and new objects.
"""
from __future__ import annotations

from .. import ir
from ..builder import Builder
from ..choose import boolean, choose
from ..fragments import fragment
from .common import FAMILY, emit, helper, operand, place, result, where


@fragment(FAMILY, "classes", "class-methods", "class-property", weight=5)
def class_methods(draw, b: Builder) -> None:
    """`__init__` setting attributes, a method calling a private method, a property with a setter;
    the object is a global, an argument or made here, and the setter writes to it."""
    cls = b.fresh("Scaler")
    count = boolean(draw)
    bump = " " * 16 + "self.calls = self.calls + 1\n" if count else ""
    helper(b, f"""
        class $C:
            def __init__(self, scale, shift):
                self.scale = scale
                self.shift = shift
                self.calls = 0

            def _affine(self, t):
                return t * self.scale + self.shift

            def apply(self, t):
{bump}                return torch.tanh(self._affine(t))

            @property
            def factor(self):
                return self.scale * 2

            @factor.setter
            def factor(self, v):
                self.scale = v / 2
        """, C=cls)
    t, var, _ = operand(draw, b)
    o = place(b, where(draw, b), f"{cls}({choose(draw, (1.5, 0.5, -2.0))}, {choose(draw, (0.25, 1))})", "sc")
    if boolean(draw):
        emit(b, "$o.factor = $o.factor + 0.5", o=o)
    tail = f" + {o}.calls" if count else ""
    result(b, f"{o}.apply({t}) * {o}.factor{tail}", var.shape, 20.0)


@fragment(FAMILY, "classes", "class-static", weight=5)
def class_static(draw, b: Builder) -> None:
    """A `@classmethod` constructor, a `@staticmethod` called through the class and the instance, and a
    class attribute read where some instances shadow it, and changed on the class between calls."""
    cls = b.fresh("Cfg")
    helper(b, """
        class $C:
            k = 2.0

            def __init__(self, k=None):
                if k is not None:
                    self.k = k

            @classmethod
            def make(cls, k):
                return cls(k)

            @staticmethod
            def mix(a, b):
                return a * 0.5 + b

            def scaled(self, t):
                return self.mix(torch.tanh(t), self.k)
        """, C=cls)
    t, var, _ = operand(draw, b)
    make = choose(draw, (f"{cls}()", f"{cls}.make(1.5)", f"{cls}.make(None)"))
    o = place(b, where(draw, b), make, "cfg")
    b.between.append(b_stmt(f"{cls}.k = {cls}.k + 1.0"))
    result(b, f"{o}.scaled({t}) + {cls}.mix({cls}.k, 1.0)", var.shape, 20.0)


def b_stmt(text: str) -> ir.Code:
    return ir.Code(text)


@fragment(FAMILY, "classes", "class-super", weight=5)
def class_super(draw, b: Builder) -> None:
    """Inheritance: `super().__init__`, an overridden method calling `super().f`, a base method calling
    the overridden one (dynamic dispatch), optionally a third level using `super(Cls, self)`."""
    base, derived = b.fresh("Base"), b.fresh("Derived")
    helper(b, """
        class $B:
            def __init__(self, k):
                self.k = k

            def f(self, t):
                return t * self.k

            def g(self, t):
                return torch.tanh(self.f(t)) + 1
        """, B=base)
    helper(b, """
        class $D($B):
            def __init__(self, k):
                super().__init__(k + 1)
                self.extra = 0.5

            def f(self, t):
                return super().f(t) - self.extra
        """, B=base, D=derived)
    top = derived
    if boolean(draw):
        top = b.fresh("Leaf")
        helper(b, """
            class $E($D):
                def f(self, t):
                    return super($E, self).f(t) * 2

                def g(self, t):
                    return $B.g(self, t) + super().g(t)
            """, B=base, D=derived, E=top)
    t, var, _ = operand(draw, b)
    o = place(b, where(draw, b), f"{top}({choose(draw, (0.5, -1.5, 2))})", "inh")
    result(b, f"{o}.g({t}) * {o}.extra", var.shape, 5.0)


@fragment(FAMILY, "classes", "class-mro", weight=5)
def class_mro(draw, b: Builder) -> None:
    """Multiple inheritance: two mixins over one base, each calling `super().g`, so the call chain
    follows the MRO of the final class (diamond), plus a plain mixin contributing a method."""
    base, ma, mb, tool, cls = (b.fresh(p) for p in ("Root", "MixA", "MixB", "Tool", "Multi"))
    helper(b, """
        class $R:
            def g(self, t):
                return t + 1
        """, R=base)
    helper(b, """
        class $A($R):
            def g(self, t):
                return super().g(t) * 2
        """, R=base, A=ma)
    helper(b, """
        class $M($R):
            def g(self, t):
                return super().g(t) - 0.5
        """, R=base, M=mb)
    helper(b, """
        class $T:
            def weight(self):
                return 0.25 * len(type(self).__mro__)
        """, T=tool)
    order = (ma, mb) if boolean(draw) else (mb, ma)
    helper(b, f"""
        class $C($T, {order[0]}, {order[1]}):
            def g(self, t):
                return super().g(t) * self.weight()
        """, C=cls, T=tool)
    t, var, _ = operand(draw, b)
    o = place(b, where(draw, b), f"{cls}()", "mro")
    result(b, f"{o}.g(torch.tanh({t}))", var.shape, 10.0)


@fragment(FAMILY, "classes", "class-isinstance", weight=5)
def class_isinstance(draw, b: Builder) -> None:
    """`isinstance`/`issubclass` choosing a branch on a global that the call plan rebinds to an instance of
    the same, a sub- or an unrelated class, so the type guard decides the branch on the re-call."""
    a, sub, other = b.fresh("Kind"), b.fresh("SubKind"), b.fresh("Other")
    helper(b, "class $A:\n    w = 1.0", A=a)
    helper(b, "class $S($A):\n    w = 2.0", A=a, S=sub)
    helper(b, "class $O:\n    w = -1.0", O=other)
    obj = b.fresh("KIND_")
    b.add_global(obj, b_expr(f"{choose(draw, (sub, a, other))}()"))
    swap = choose(draw, (a, sub, other))
    b.between.extend((ir.Global((obj,)), ir.Assign(ir.Name(obj), b_expr(f"{swap}()"))))
    t, var, _ = operand(draw, b)
    name = b.fresh("k")
    emit(b, f"""
        if isinstance({obj}, {sub}):
            {name} = torch.tanh({t}) * {obj}.w
        elif isinstance({obj}, {a}) and issubclass(type({obj}), {a}):
            {name} = torch.sin({t}) + {obj}.w
        else:
            {name} = torch.cos({t}) - {obj}.w
        """)
    result(b, f"{name} + isinstance({obj}, ({a}, {other}))", var.shape, 4.0)


def b_expr(text: str) -> ir.CodeExpr:
    return ir.CodeExpr(text)


@fragment(FAMILY, "classes", "class-local", weight=5)
def class_local(draw, b: Builder) -> None:
    """A class statement inside the compiled function (Dynamo breaks the graph there), optionally closing
    over a local of the frame, and a method of it called on a fresh instance.

    The class object is new on every call and Dynamo guards on its identity after the break, so each call
    recompiles by design; the class body reads a global the call plan changes, so no two calls start from
    the same state and the recompile is not an over-guard.
    """
    cls, step = b.fresh("Local"), b.fresh("STEP_")
    b.add_global(step, ir.Const(0))
    b.between.extend((ir.Global((step,)), ir.Assign(ir.Name(step), ir.Name("call"))))
    t, var, _ = operand(draw, b)
    k = b.fresh("scale")
    closes = boolean(draw)
    if closes:
        emit(b, f"{k} = {choose(draw, (0.5, 2.0))}")
    body = f"k = {k} + {step}" if closes else f"k = 1.5 - {step}"
    emit(b, f"""
        class {cls}:
            {body}

            def __init__(self, off):
                self.off = off

            def g(self, t):
                return torch.tanh(t) * self.k + self.off
        """)
    result(b, f"{cls}(0.25).g({t})", var.shape, 10.0)
