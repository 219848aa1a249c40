"""Classes defined by their dunder methods: `__call__`, the container protocol (`__len__`, `__getitem__`,
`__iter__`, `__contains__`, and iteration through `__getitem__` alone), operator overloading with a
reflected operand and an `__eq__` returning bool, `__getattr__` fallbacks, an `__setattr__` override,
`__slots__`, data and non-data descriptors, and subclasses of list / dict / tuple with extra methods.

Each is a different path through Dynamo's `UserDefinedObjectVariable` (dunder dispatch, the generic
`getattr` fallback, slot member descriptors, descriptor `__get__`/`__set__` inlining).
"""
from __future__ import annotations

from ..builder import Builder
from ..choose import boolean, choose
from ..fragments import fragment
from .common import FAMILY, emit, helper, operand, place, result, where


@fragment(FAMILY, "classes", "class-call", weight=5)
def class_call(draw, b: Builder) -> None:
    """An instance with `__call__` (a keyword default), called directly and passed to a function."""
    cls = b.fresh("Affine")
    helper(b, """
        class $C:
            def __init__(self, w):
                self.w = w

            def __call__(self, t, k=1.0):
                return torch.tanh(t * self.w) + k
        """, C=cls)
    t, var, _ = operand(draw, b)
    o = place(b, where(draw, b), f"{cls}({choose(draw, (0.5, 2.0, -1.0))})", "fn")
    via = choose(draw, (f"{o}({t})", f"{o}({t}, k=0.5)", f"(lambda g, v: g(v, 2.0))({o}, {t})",
                        f"{o}.__call__({t})"))
    result(b, via, var.shape, 4.0)


@fragment(FAMILY, "classes", "class-container", weight=5)
def class_container(draw, b: Builder) -> None:
    """A sequence-like class: `len`, indexing, `in` and iteration (through `__iter__`, or through
    `__getitem__` raising IndexError when `__iter__` is absent)."""
    cls = b.fresh("Bag")
    legacy = boolean(draw)
    iter_def = "" if legacy else "\n    def __iter__(self):\n        return iter(self.items)\n"
    helper(b, f"""
class $C:
    def __init__(self, items):
        self.items = list(items)

    def __len__(self):
        return len(self.items)

    def __getitem__(self, i):
        return self.items[i]

    def __contains__(self, v):
        return v in self.items
{iter_def}""", C=cls)
    t, var, _ = operand(draw, b)
    o = place(b, where(draw, b), f"{cls}({choose(draw, ([1, 2, 3], [0.5, -1.0], [2]))})", "bag")
    acc, v = b.fresh("acc"), b.fresh("v")
    emit(b, f"""
        {acc} = 0.0
        """)
    emit(b, f"""
        for {v} in {o}:
            {acc} = {acc} + {v}
        """)
    result(b, f"torch.tanh({t}) * {acc} + len({o}) + {o}[-1] + (2 in {o})", var.shape, 20.0)


@fragment(FAMILY, "classes", "class-operators", weight=5)
def class_operators(draw, b: Builder) -> None:
    """A tensor wrapper with `__add__`, `__radd__`, `__mul__`, `__neg__`, `__or__`, `__eq__` returning bool,
    `__bool__` (truth tested in the frame) and `__repr__` (its length read)."""
    cls = b.fresh("Vec")
    helper(b, """
        class $V:
            def __init__(self, t, tag=0):
                self.t = t
                self.tag = tag

            def __add__(self, o):
                return $V(self.t + (o.t if isinstance(o, $V) else o), self.tag)

            def __radd__(self, o):
                return $V(o + self.t, self.tag + 1)

            def __mul__(self, k):
                return $V(self.t * k, self.tag)

            def __neg__(self):
                return $V(-self.t, self.tag)

            def __eq__(self, o):
                return isinstance(o, $V) and self.tag == o.tag

            def __or__(self, o):
                return $V(torch.maximum(self.t, o.t), self.tag | o.tag)

            def __bool__(self):
                return self.tag >= 0

            def __repr__(self):
                return f"$V(tag={self.tag})"
        """, V=cls)
    t, var, _ = operand(draw, b)
    va, vb, w = b.fresh("va"), b.fresh("vb"), b.fresh("w")
    emit(b, f"{va} = {cls}(torch.tanh({t}))")
    emit(b, f"{vb} = {cls}(torch.sin({t}), {choose(draw, (0, 1))})")
    expr = choose(draw, (f"({va} + {vb}) * 0.5", f"1.0 + {va}", f"-{va} + {vb} * 2.0", f"{va} * 3.0 + 0.5",
                         f"{va} | {vb}"))
    emit(b, f"{w} = {expr}")
    extra = choose(draw, ("", f" + (2.0 if {w} else 0.0)", f" + len(repr({w}))"))
    result(b, f"{w}.t + ({w}.tag + 1) * (1.0 if {va} == {vb} else -1.0) + ({w} != {va}){extra}", var.shape, 30.0)


@fragment(FAMILY, "classes", "class-getattr", weight=5)
def class_getattr(draw, b: Builder) -> None:
    """`__getattr__` computing missing attributes from their name, raising AttributeError otherwise;
    read directly, through `getattr` with a default, and through `hasattr`."""
    cls = b.fresh("Lazy")
    helper(b, """
        class $C:
            def __init__(self):
                self.base = 1.5

            def __getattr__(self, name):
                if name.startswith("x_"):
                    return self.base * len(name)
                raise AttributeError(name)
        """, C=cls)
    t, var, _ = operand(draw, b)
    o = place(b, where(draw, b), f"{cls}()", "lz")
    read = choose(draw, (f"{o}.x_ab", f"getattr({o}, 'missing', 0.5)", f"getattr({o}, 'x_q')",
                         f"(2.0 if hasattr({o}, 'x_z') else 1.0) + hasattr({o}, 'nope')"))
    result(b, f"torch.tanh({t}) * ({read}) + {o}.base", var.shape, 20.0)


@fragment(FAMILY, "classes", "class-setattr", weight=5)
def class_setattr(draw, b: Builder) -> None:
    """`__setattr__` overridden to log names and double numbers, storing through `object.__setattr__` or
    `super().__setattr__`; the log list is state a compiled frame must replay."""
    cls = b.fresh("Logged")
    store = choose(draw, ("object.__setattr__(self, name, value)", "super().__setattr__(name, value)"))
    helper(b, f"""
        class $C:
            def __init__(self):
                object.__setattr__(self, "log", [])

            def __setattr__(self, name, value):
                self.log.append(name)
                if isinstance(value, float):
                    value = value * 2
                {store}
        """, C=cls)
    t, var, _ = operand(draw, b)
    o = place(b, where(draw, b), f"{cls}()", "lg")
    emit(b, f"{o}.a = {choose(draw, (0.5, 1.25))}")
    if boolean(draw):
        emit(b, f"{o}.s = torch.tanh({t})")
        tail = f" + {o}.s"
    else:
        tail = ""
    result(b, f"torch.tanh({t}) * {o}.a + (len({o}.log) % 5){tail}", var.shape, 10.0)


@fragment(FAMILY, "classes", "class-slots", weight=5)
def class_slots(draw, b: Builder) -> None:
    """A `__slots__` class (no `__dict__`): slot reads and writes on a pre-existing or new instance."""
    cls = b.fresh("Slotted")
    helper(b, """
        class $C:
            __slots__ = ("a", "n")

            def __init__(self, a):
                self.a = a
                self.n = 0

            def bump(self):
                self.n = (self.n + 1) % 4
                return self.n
        """, C=cls)
    t, var, _ = operand(draw, b)
    o = place(b, where(draw, b), f"{cls}({choose(draw, (0.5, 2.0))})", "sl")
    emit(b, f"{o}.bump()")
    result(b, f"torch.tanh({t}) * {o}.a + {o}.n + hasattr({o}, '__dict__')", var.shape, 8.0)


@fragment(FAMILY, "classes", "class-descriptor", weight=5)
def class_descriptor(draw, b: Builder) -> None:
    """A data descriptor (`__set_name__`, `__get__`, `__set__`) or a non-data one (`__get__` only,
    shadowed by an instance attribute) on a class attribute."""
    desc, cls = b.fresh("Field"), b.fresh("Holder")
    data = boolean(draw)
    setter = "\n    def __set__(self, obj, value):\n        setattr(obj, self.name, value + 1)\n" if data else ""
    helper(b, f"""
class $D:
    def __set_name__(self, owner, name):
        self.name = "_" + name

    def __get__(self, obj, objtype=None):
        if obj is None:
            return self
        return getattr(obj, self.name, 1.0) * 2
{setter}""", D=desc)
    helper(b, """
        class $C:
            w = $D()
        """, C=cls, D=desc)
    t, var, _ = operand(draw, b)
    o = place(b, where(draw, b), f"{cls}()", "hd")
    emit(b, f"{o}.w = {choose(draw, (0.5, -1.0))}")
    result(b, f"torch.tanh({t}) * {o}.w + isinstance({cls}.w, {desc})", var.shape, 8.0)


@fragment(FAMILY, "classes", "class-builtin-subclass", weight=5)
def class_builtin_subclass(draw, b: Builder) -> None:
    """Subclasses of tuple (properties over items), list (a method building a new list) and dict (with
    `__missing__`), with extra methods called in the frame."""
    base = choose(draw, ("tuple", "list", "dict"))
    cls = b.fresh(f"My{base.capitalize()}")
    t, var, _ = operand(draw, b)
    if base == "tuple":
        helper(b, """
            class $C(tuple):
                @property
                def first(self):
                    return self[0]

                def total(self):
                    return sum(self)
            """, C=cls)
        o = place(b, where(draw, b), f"{cls}((1.5, 2, 0.5))", "tp")
        read = f"{o}.first * {o}.total() + len({o} + (1,))"
    elif base == "list":
        helper(b, """
            class $C(list):
                def scaled(self, k):
                    return [v * k for v in self]

                def head(self):
                    return self[0] if self else 0.0
            """, C=cls)
        o = place(b, where(draw, b), f"{cls}([0.5, 2.0])", "ls")
        read = f"sum({o}.scaled(0.5)) + {o}.head() + len({o})"
    else:
        helper(b, """
            class $C(dict):
                def __missing__(self, key):
                    return len(key)

                def pick(self, *keys):
                    return sum(self[k] for k in keys)
            """, C=cls)
        make = choose(draw, (f"{cls}(a=1.5, b=0.5)", f"{cls}.fromkeys(('a', 'b'), 0.5)"))
        o = place(b, where(draw, b), make, "dc")
        read = f"{o}.pick('a', 'zz') + {o}['q'] + ('zz' in {o})"
    result(b, f"torch.tanh({t}) * ({read})", var.shape, 30.0)
