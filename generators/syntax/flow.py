"""Control flow Dynamo unrolls: `match` statements (literal, sequence with a star, mapping with `**rest`,
class patterns on a module-level class and on builtins, guards), `while` loops with a counter,
`break`/`continue`/`else`, `for ... else`, nested loops, and iteration over a tensor's first dimension
and over dict items.

The branch or iteration count taken decides a value folded into a returned tensor.
"""
from __future__ import annotations

from ..builder import Builder
from ..choose import choose, integer
from .common import code, construct, fold, operand


def _point_class(b: Builder) -> str:
    cls = b.fresh("SynPoint")
    code(b, f"""
        class {cls}:
            __match_args__ = ('a', 'b')
            def __init__(self, a, b):
                self.a = a
                self.b = b
        """, module=True)
    return cls


@construct("match")
def match_stmt(draw, b: Builder) -> None:
    """A `match` whose case is decided by sizes, literals or the class of the subject."""
    var, x, bound = operand(draw, b)
    k = b.fresh("k")
    kind = choose(draw, ("literal", "sequence", "mapping", "class", "shape", "builtin-class"))
    if kind == "literal":
        subject = choose(draw, (f"{x}.numel()", f"{x}.dim()", str(integer(draw, 0, 12))))
        code(b, f"""
            match {subject}:
                case 1 | 2:
                    {k} = {x} + 1
                case 4 | 12:
                    {k} = {x} * 2
                case n if n > 5:
                    {k} = {x} - n
                case _:
                    {k} = {x}
            """)
        fold(b, k, var.shape, 2 * bound + 24)
    elif kind == "sequence":
        n = integer(draw, 1, 4)
        items = ", ".join(f"{x} * {i + 1}" for i in range(n))
        code(b, f"""
            match [{items}]:
                case [a]:
                    {k} = a
                case [a, b]:
                    {k} = a - b
                case [a, *rest] if len(rest) == 2:
                    {k} = a + rest[0] - rest[1]
                case [*_, last]:
                    {k} = last * 0.5
            """)
        fold(b, k, var.shape, 4 * bound)
    elif kind == "mapping":
        shape = choose(draw, ("scale", "shift", "other"))
        code(b, f"""
            match {{'kind': '{shape}', 'value': {integer(draw, 1, 3)}, 'extra': {x}}}:
                case {{'kind': 'shift', 'value': v}}:
                    {k} = {x} + v
                case {{'kind': 'scale', 'value': v, **others}}:
                    {k} = others['extra'] * v + len(others)
                case {{'extra': e}}:
                    {k} = e - 1
            """)
        fold(b, k, var.shape, 3 * bound + 3)
    elif kind == "class":
        cls = _point_class(b)
        second = choose(draw, (3, 2, 0))
        code(b, f"""
            match {cls}({x}, {second}):
                case {cls}(a, b=3):
                    {k} = a + 3
                case {cls}(a, b) if b > 1:
                    {k} = a * b
                case {cls}(a=a):
                    {k} = a - 1
            """)
        fold(b, k, var.shape, 2 * bound + 3)
    elif kind == "shape":
        code(b, f"""
            match {x}.shape:
                case ():
                    {k} = {x} + 1
                case (n,):
                    {k} = {x} * n
                case (n, m):
                    {k} = {x} + n - m
                case (n, *rest):
                    {k} = {x} - len(rest)
            """)
        fold(b, k, var.shape, 4 * bound + 4)
    else:
        value = choose(draw, ("3", "2.5", x, "'ab'", "(1, 2)"))
        code(b, f"""
            match {value}:
                case bool():
                    {k} = {x}
                case int(n):
                    {k} = {x} + n
                case float(v):
                    {k} = {x} * v
                case torch.Tensor():
                    {k} = {x} * 2
                case str() as s:
                    {k} = {x} - len(s)
                case (p, q):
                    {k} = {x} + p * q
            """)
        fold(b, k, var.shape, 3 * bound + 3)


@construct("loop-while")
def while_loop(draw, b: Builder) -> None:
    """A `while` loop on a counter with `continue`, `break` and an `else` clause."""
    var, x, bound = operand(draw, b)
    i, acc = b.fresh("i"), b.fresh("acc")
    n = integer(draw, 2, 5)
    skip = integer(draw, 0, n)
    stop = choose(draw, (n + 1, integer(draw, 1, n)))
    code(b, f"""
        {i} = 0
        {acc} = {x}
        while {i} < {n}:
            {i} += 1
            if {i} == {skip}:
                continue
            if {i} >= {stop}:
                break
            {acc} = {acc} * 0.5 + {i}
        else:
            {acc} = {acc} - 1
        """)
    fold(b, f"{acc} + {i}", var.shape, bound + 2 * n + 8)


@construct("loop-for")
def for_loop(draw, b: Builder) -> None:
    """`for ... else` with `break`, nested loops with `continue`, a loop over a tensor's rows (with
    `enumerate`), and a loop over dict items."""
    var, x, bound = operand(draw, b)
    acc = b.fresh("acc")
    kind = choose(draw, ("for-else", "nested", "rows", "dict-items", "zip-reversed"))
    if kind == "for-else":
        n = integer(draw, 1, 4)
        code(b, f"""
            {acc} = {x}
            for i in range({n}):
                if i == {integer(draw, 0, 4)}:
                    break
                {acc} = {acc} + i
            else:
                {acc} = {acc} - 1
            """)
        fold(b, acc, var.shape, bound + 8)
    elif kind == "nested":
        code(b, f"""
            {acc} = {x}
            for i in range(2):
                for j in range({integer(draw, 1, 3)}):
                    if j == i:
                        continue
                    {acc} = {acc} + i * j
            """)
        fold(b, acc, var.shape, bound + 6)
    elif kind == "rows":
        rows = x if var.shape else f"{x}.reshape(1)"
        step = choose(draw, ("plain", "enumerate"))
        loop = f"for row in {rows}:" if step == "plain" else f"for i, row in enumerate({rows}):"
        term = "torch.tanh(row).sum()" if step == "plain" else "torch.tanh(row).sum() * i"
        code(b, f"""
            {acc} = 0
            {loop}
                {acc} = {acc} + {term}
            """)
        fold(b, f"{x} + {acc}", var.shape, bound + var.numel * max(var.shape[:1] or (1,)))
    elif kind == "dict-items":
        d = b.fresh("d")
        code(b, f"""
            {d} = {{'a': 1, 'bb': 2, 'ccc': {x}}}
            {acc} = 0
            for key, val in {d}.items():
                {acc} = {acc} + val * len(key)
            """)
        fold(b, acc, var.shape, 3 * bound + 5)
    else:
        code(b, f"""
            {acc} = {x}
            for i, {acc}_w in zip(reversed(range(3)), [0.5, -1.0, 2.0]):
                {acc} = {acc} + i * {acc}_w
            """)
        fold(b, acc, var.shape, bound + 4)
