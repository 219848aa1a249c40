"""How classes are made: `__new__` overrides, `__init_subclass__` registries and class decorators, a
metaclass with its own `__call__` and class-level attributes, and a class built by `type(...)` inside the
frame; plus the transforms and autograd forms the other modules leave out: torch.func.vjp / jvp /
hessian, an autograd.Function that mutates its input (`mark_dirty`) without materialized grads, and a
helper traced opaquely by `torch._dynamo.nonstrict_trace`.
"""
from __future__ import annotations

from .. import ir
from ..builder import Builder
from ..choose import choose
from ..effects.common import grad_input
from ..fragments import fragment
from .common import FAMILY, emit, helper, operand, place, result, where


@fragment(FAMILY, "classes", "class-new", weight=5)
def class_new(draw, b: Builder) -> None:
    """`__new__` setting an attribute before `__init__`, `__init_subclass__` recording subclasses in a
    class-level list, and a class decorator adding a method; the subclass is instantiated in the frame."""
    base, sub, deco = b.fresh("Registered"), b.fresh("Member"), b.fresh("with_scale")
    helper(b, """
        class $B:
            kinds = []

            def __new__(cls, k):
                obj = super().__new__(cls)
                obj.born = len(cls.kinds)
                return obj

            def __init_subclass__(cls, weight=1.0, **kwargs):
                super().__init_subclass__(**kwargs)
                cls.weight = weight
                $B.kinds.append(cls.__name__)

            def __init__(self, k):
                self.k = k
        """, B=base)
    helper(b, """
        def $D(cls):
            cls.scaled = lambda self, t: t * self.k * cls.weight
            return cls
        """, D=deco)
    helper(b, f"""
        @$D
        class $S($B, weight={choose(draw, (0.5, 2.0))}):
            pass
        """, B=base, S=sub, D=deco)
    t, var, _ = operand(draw, b)
    o = b.fresh("member")
    emit(b, f"{o} = {sub}({choose(draw, (1.5, -0.5))})")
    result(b, f"torch.tanh({o}.scaled(torch.tanh({t}))) + {o}.born + len({base}.kinds)", var.shape, 4.0)


@fragment(FAMILY, "classes", "class-metaclass", weight=5)
def class_metaclass(draw, b: Builder) -> None:
    """A metaclass giving its classes a class-level attribute (from `__new__`) and a `__call__` that
    counts instances before delegating to `type.__call__`.

    The instance is a global, an argument or made in the frame. torch 2.13 skips a custom metaclass
    `__call__` for an instance made in the frame (the count is lost and its read is stale): a known bug,
    corpus/metaclass_call_skipped.py, upstream pytorch/pytorch#184820."""
    meta, cls = b.fresh("Meta"), b.fresh("Metered")
    helper(b, """
        class $M(type):
            def __new__(mcs, name, bases, ns):
                ns.setdefault("tag", len(name))
                return super().__new__(mcs, name, bases, ns)

            def __call__(cls, *args):
                cls.made = cls.made + 1
                return super().__call__(*args)
        """, M=meta)
    helper(b, """
        class $C(metaclass=$M):
            made = 0

            def __init__(self, w):
                self.w = w

            def measure(self, t):
                return torch.tanh(t) * self.w
        """, C=cls, M=meta)
    t, var, _ = operand(draw, b)
    inst = place(b, where(draw, b), f"{cls}({choose(draw, (0.5, 2.0))})", "metered")
    result(b, f"{inst}.measure({t}) + {cls}.tag % 3 + ({cls}.made % 4) + isinstance({cls}, {meta})", var.shape, 10.0)


@fragment(FAMILY, "classes", "class-local", weight=4)
def class_dynamic(draw, b: Builder) -> None:
    """A class built with `type(name, bases, namespace)` in the frame, deriving from a module-level base
    and carrying a lambda method; it reads a global the plan changes (a new class per call is a new guard
    by design, so calls never start from the same state)."""
    base = b.fresh("DynBase")
    helper(b, """
        class $B:
            k = 1.0

            def g(self, t):
                return torch.tanh(t) * self.k + self.bias(t)
        """, B=base)
    t, var, _ = operand(draw, b)
    step, dyn = b.fresh("DSTEP_"), b.fresh("dyn")
    b.add_global(step, ir.Const(0))
    b.between.extend((ir.Global((step,)), ir.Assign(ir.Name(step), ir.Name("call"))))
    k = choose(draw, ("2.0", "0.5"))
    emit(b, f"{dyn} = type('Dyn', ({base},), {{'k': {k} + {step}, 'bias': lambda self, t: torch.sin(t) * 0.5}})")
    result(b, f"{dyn}().g({t}) + issubclass({dyn}, {base})", var.shape, 10.0)


@fragment(FAMILY, "classes", "func-grad", weight=3)
def func_vjp_jvp(draw, b: Builder) -> None:
    """torch.func.vjp (its pullback applied to ones), jvp with a tangent, or hessian of a tiny function."""
    t, var, _ = operand(draw, b, vector=True)
    n = min(var.numel, 3)
    v = f"torch.tanh({t}).flatten()[:{n}]"
    kind = choose(draw, ("vjp", "jvp", "hessian"))
    if kind == "vjp":
        out, pull = b.fresh("vo"), b.fresh("pull")
        emit(b, f"{out}, {pull} = torch.func.vjp(lambda u: torch.sin(u) * u, {v})")
        expr, shape = f"{out} + {pull}(torch.ones_like({out}))[0]", (n,)
    elif kind == "jvp":
        pair = b.fresh("jv")
        emit(b, f"{pair} = torch.func.jvp(lambda u: torch.cos(u) * 2, ({v},), (torch.ones_like({v}),))")
        expr, shape = f"{pair}[0] + {pair}[1]", (n,)
    else:
        expr, shape = f"torch.func.hessian(lambda u: (torch.sin(u) * u).sum())({v})", (n, n)
    result(b, expr, shape, 10.0)


@fragment(FAMILY, "classes", "autograd-ctx", weight=3, nestable=False)
def autograd_dirty(draw, b: Builder) -> None:
    """An autograd.Function that doubles its input in place (`ctx.mark_dirty`), with materialized grads
    switched off (`ctx.set_materialize_grads(False)`, so backward sees None for an unused output)."""
    cls = b.fresh("InPlace")
    helper(b, """
        class $C(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.set_materialize_grads(False)
                x.mul_(2)
                ctx.mark_dirty(x)
                return x, x.detach() + 1

            @staticmethod
            def backward(ctx, grad, grad_other):
                if grad is None:
                    return None
                return grad * 2
        """, C=cls)
    g = grad_input(b, (3,), choose(draw, (0.25, -0.5)))
    y, other = b.fresh("y"), b.fresh("side")
    emit(b, f"{y}, {other} = {cls}.apply({g.id}.clone())")
    b.returns.append(ir.CodeExpr(f"torch.sin({y}) + {other}"))


@fragment(FAMILY, "classes", "opaque-helper", weight=3)
def nonstrict_trace(draw, b: Builder) -> None:
    """A pure tensor helper marked `torch._dynamo.nonstrict_trace` (traced as one opaque call, its
    Python body run only on fake tensors), with a float argument."""
    fn = b.fresh("opaque_ns")
    helper(b, """
        @torch._dynamo.nonstrict_trace
        def $F(t, k):
            return torch.tanh(t) * k + 1
        """, F=fn)
    t, var, _ = operand(draw, b)
    result(b, f"{fn}({t}, {choose(draw, (2.0, 0.5))})", var.shape, 4.0)
