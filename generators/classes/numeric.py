"""A user-defined number: a class with the whole numeric protocol (every binary operator with its reflected
and in-place forms, shifts and bitwise operators included, `divmod`, unary `-`/`+`/`abs`/`~`, `__index__`,
`__int__`, `__float__`, `__bool__`), and a list subclass repeated with `*` and `*=`.

Dynamo dispatches each operator of a user object through its own slot (`nb_lshift`, `nb_inplace_xor`,
`nb_divmod`, `sq_repeat`...); in-place forms that mutate a global or argument instance are side effects it
must replay. The value is folded into a tensor output, so a wrong slot, a reflected operand swapped, or an
in-place form that returned a copy shows as a wrong number.
"""
from __future__ import annotations

from .. import ir
from ..builder import Builder
from ..choose import choose, integer
from ..fragments import fragment
from .common import FAMILY, emit, helper, operand, place, result, where

NUM = """
class $C:
    def __init__(self, v):
        self.v = v

    def _w(self, o):
        return o.v if isinstance(o, $C) else o

    def __add__(self, o): return $C(self.v + self._w(o))
    def __radd__(self, o): return $C(self._w(o) + self.v)
    def __sub__(self, o): return $C(self.v - self._w(o))
    def __rsub__(self, o): return $C(self._w(o) - self.v)
    def __mul__(self, o): return $C(self.v * self._w(o))
    def __floordiv__(self, o): return $C(self.v // self._w(o))
    def __truediv__(self, o): return $C(self.v / self._w(o))
    def __mod__(self, o): return $C(self.v % self._w(o))
    def __divmod__(self, o): return divmod(self.v, self._w(o))
    def __lshift__(self, o): return $C(self.v << self._w(o))
    def __rshift__(self, o): return $C(self.v >> self._w(o))
    def __and__(self, o): return $C(self.v & self._w(o))
    def __or__(self, o): return $C(self.v | self._w(o))
    def __xor__(self, o): return $C(self.v ^ self._w(o))
    def __rxor__(self, o): return $C(self._w(o) ^ self.v)
    def __neg__(self): return $C(-self.v)
    def __pos__(self): return $C(+self.v)
    def __abs__(self): return $C(abs(self.v))
    def __invert__(self): return $C(~self.v)
    def __index__(self): return int(self.v)
    def __int__(self): return int(self.v)
    def __float__(self): return float(self.v)
    def __bool__(self): return self.v != 0
$INPLACE"""

INPLACE = """
    def __iadd__(self, o):
        self.v += self._w(o)
        return self

    def __isub__(self, o):
        self.v -= self._w(o)
        return self

    def __imul__(self, o):
        self.v *= self._w(o)
        return self

    def __ilshift__(self, o):
        self.v <<= self._w(o)
        return self

    def __irshift__(self, o):
        self.v >>= self._w(o)
        return self

    def __ixor__(self, o):
        self.v ^= self._w(o)
        return self

    def __ior__(self, o):
        self.v |= self._w(o)
        return self

    def __iand__(self, o):
        self.v &= self._w(o)
        return self

    def __ifloordiv__(self, o):
        self.v //= self._w(o)
        return self

    def __imod__(self, o):
        self.v %= self._w(o)
        return self
"""

# (statement over the instance `$N` and a second operand `$M`, both holding ints 1..7); each keeps |v| < 2**10.
STEPS = (
    "$N = $N + $M - 1", "$N = 2 + $N", "$N = 9 - $N", "$N = $N * 3", "$N = $N // 2 + 1", "$N = $N % 5 + 1",
    "$N = ($N << 2) >> 1", "$N = $N >> 1", "$N = ($N & 6) | 1", "$N = $N ^ $M", "$N = 3 ^ $N",
    "$N = -(-$N)", "$N = abs(-$N) + +$M", "$N = ~(~$N)", "$N = $N + divmod($N, 3)[1]",
    "$N = $N + [5, 4, 3, 2, 1, 0, 1, 2][$N % 8]", "$N = $N + int(float($N / 2))",
    "$N = $N + (1 if $N else 2)", "$N = $N + operator.index($M)",
)
INPLACE_STEPS = (
    "$N += $M", "$N -= 1", "$N *= 2", "$N <<= 1", "$N >>= 1", "$N ^= 5", "$N |= 2", "$N &= 15",
    "$N //= 2", "$N %= 7",
)


@fragment(FAMILY, "classes", "class-numeric", weight=5)
def class_numeric(draw, b: Builder) -> None:
    """A number-like instance run through a few operators (in-place ones mutating it when it is shared),
    then folded into a tensor with `int()`, `float()`, indexing or `range`."""
    b.add_import(ir.Import("operator"))
    cls = b.fresh("Num")
    inplace = integer(draw, 0, 1) == 1
    helper(b, NUM.replace("$INPLACE", INPLACE if inplace else ""), C=cls)
    n = place(b, where(draw, b), f"{cls}({integer(draw, 1, 7)})", "num")
    m = b.fresh("m")
    emit(b, "$M = $C($V)", M=m, C=cls, V=integer(draw, 1, 7))
    local = b.fresh("acc")
    emit(b, "$A = $N", A=local, N=n)
    for _ in range(integer(draw, 1, 4)):
        step = choose(draw, STEPS + (INPLACE_STEPS if inplace else ()))
        emit(b, step.replace("$N", local).replace("$M", m))
        emit(b, "$A = $C(max(min(int($A), 64), -64))", A=local, C=cls)
    t, var, bound = operand(draw, b)
    fold = choose(draw, (f"{t} * float({local}) / 64", f"{t} + int({local}) % 5",
                         f"{t} + len(range(abs(int({local})) % 4))", f"{t} * (1 + int(bool({local})))",
                         f"{t} + [0.5, 1.5, 2.5][operator.index({cls}(abs(int({local})) % 3))]"))
    result(b, fold, var.shape, bound * 2 + 5, "nm")
