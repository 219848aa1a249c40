"""Python values Dynamo computes on while tracing, made from sizes so CPython cannot fold them away:
int bit operations, `divmod`, `abs`, strings (iteration, `in`, indexing, methods through their type),
`range` objects (slicing, `in`, `count`, `index`, equality), `slice` objects, tuples and `torch.Size` as
dict keys, `torch.Size` methods, and function attributes (`__name__`, `__defaults__`, `__kwdefaults__`).
"""
from __future__ import annotations

from ..builder import Builder
from ..choose import boolean, choose
from .common import code, construct, fold, operand


@construct("scalar-ops")
def scalar_ops(draw, b: Builder) -> None:
    """One small computation on Python values derived from a tensor's sizes, folded into a tensor."""
    var, x, bound = operand(draw, b)
    n, k = b.fresh("n"), b.fresh("k")
    code(b, f"{n} = {x}.dim() + {x}.numel() % 5")
    kind = choose(draw, ("bits", "string", "range", "slice", "keys", "size", "descriptor", "fn-attrs"))
    expr = {
        "bits": f"({n} << 2 | 3) ^ ({n} & 1) + abs(-{n}) + divmod({n} + 7, 3)[1] + (~{n} % 4) + {n} ** 2 // 5",
        "string": f"sum(1 for ch in 'abcab' if ch == 'ab'[{n} % 2]) + ('b' in 'abc'[{n} % 3:]) "
                  f"+ len('x_y_z'.split('_')[{n} % 3]) + 'abc'.index('abc'[{n} % 3]) + len(str.upper('ab'))",
        "range": f"len(range(10)[{n} % 4::2]) + ({n} in range(1, 9, 2)) + range(12).count({n}) "
                 f"+ range(0, 20, 2).index(2 * ({n} % 5)) + (range(0, {n}) == range({n})) + max(range({n} + 1))",
        "slice": f"len([1, 2, 3, 4, 5][slice({n} % 3, None, 2)]) + slice(1, {n} + 2).stop "
                 f"+ sum(slice(0, 9, 3).indices({n} + 4))",
        "keys": f"{{(1, 2): 3, (2, 1): 4, {x}.shape: 5}}[{x}.shape] + {{(0, {n} % 2): 1, (0, 1): 2, (0, 0): 7}}"
                f"[(0, {n} % 2)]",
        "size": f"{x}.shape.numel() + len({x}.shape + (1, 2)) + ({x}.shape + (7,)).index(7) "
                f"+ ({x}.shape + (1,)).count(1) + int({x}.shape == tuple({x}.shape))",
        "descriptor": f"list.__len__([1, 2]) + dict.get({{'a': {n}}}, 'a', 0) + int.__add__({n}, 1) "
                      f"+ str.count('aab', 'a') + tuple.index((3, {n}), {n})",
        "fn-attrs": None,
    }[kind]
    if expr is None:
        helper = b.fresh("syn_attrs")
        code(b, f"""
            def {helper}(t, scale=2, *, shift=1):
                return t * scale + shift
            """, module=True)
        expr = (f"len({helper}.__name__) + {helper}.__defaults__[0] + {helper}.__kwdefaults__['shift'] "
                f"+ {helper}.__code__.co_argcount + int(callable({helper}))")
    code(b, f"{k} = {expr}")
    fold(b, f"{x} + {k}", var.shape, bound + 200)


@construct("introspection")
def introspection(draw, b: Builder) -> None:
    """Object introspection and dynamic code Dynamo must model or break on: `vars()`, `dir()`, and `eval`
    of a constant expression."""
    var, x, bound = operand(draw, b)
    k = b.fresh("k")
    # Left out: a `class` statement in the frame (a new class object on every call fails Dynamo's identity
    # guard, a recompile per call by design) and `locals()` (wrong whenever a comprehension of the frame closes
    # over a local, a torch bug: corpus/locals_with_comprehension_cell_wrong.py; comprehensions are common here).
    if boolean(draw):
        cls = b.fresh("SynBag")
        code(b, f"""
            class {cls}:
                def __init__(self):
                    self.alpha = 1
                    self.beta = 2
            """, module=True)
        code(b, f"""
            {k} = {cls}()
            {k} = {x} + len(vars({k})) + sum(vars({k}).values()) + len([n for n in dir({k}) if not n.startswith('_')])
            """)
    else:
        code(b, f"{k} = {x} * eval('1 + 2') + eval('n * 2', {{'n': {x}.dim()}})")
    fold(b, k, var.shape, 3 * bound + 10)
