"""Generators and comprehensions: `def` with `yield`, `yield from` (and its return value), `send`,
generator expressions consumed by `sum`/`tuple`/`max`, `next()` on a generator, a generator alive across
a graph break; list, dict and set comprehensions (sets of ints only), nested, filtered, over a tensor's
rows, and comprehensions with a graph break or a `print` inside their body.
"""
from __future__ import annotations

from ..builder import Builder
from ..choose import boolean, choose, integer
from .common import GRAPH_BREAK, code, construct, fold, operand


def _generators(draw, b: Builder) -> tuple[str, str]:
    """Two module-level generator functions: a plain one returning its count, and one delegating to it.

    Reading the delegate's return value (`r = yield from ...`) hits a known torch bug
    (corpus/yield_from_return_value_lost.py), so it is drawn rarely: the bug is known, the other
    constructs of the program would go unchecked."""
    gen, outer = b.fresh("syn_gen"), b.fresh("syn_chain")
    code(b, f"""
        def {gen}(t, n):
            for i in range(n):
                yield t * (i + 1)
            return n
        """, module=True)
    value = integer(draw, 0, 7) == 0
    code(b, f"""
        def {outer}(t):
            yield t
            {"r = yield from" if value else "yield from"} {gen}(t, 2)
            yield t - {"r" if value else "2"}
        """, module=True)
    return gen, outer


@construct("generator")
def generator(draw, b: Builder) -> None:
    """A generator function or expression, consumed whole or step by step (maybe across a graph break)."""
    var, x, bound = operand(draw, b)
    k, g = b.fresh("k"), b.fresh("gen")
    kind = choose(draw, ("sum", "tuple", "next", "genexp", "break", "send", "close", "zip"))
    if kind == "close":
        b.tag("try-finally")
        fin = b.fresh("syn_closing")
        code(b, f"""
            def {fin}(t, log):
                try:
                    yield t
                    yield t * 2
                finally:
                    log.append(1)
            """, module=True)
        log = b.fresh("log")
        code(b, f"""
            {log} = []
            {g} = {fin}({x}, {log})
            {k} = next({g})
            {g}.close()
            """)
        fold(b, f"{k} + len({log})", var.shape, bound + 1)
        return
    if kind == "send":
        echo = b.fresh("syn_echo")
        code(b, f"""
            def {echo}(t):
                total = 0
                while True:
                    got = yield t * total
                    if got is None:
                        return
                    total += got
            """, module=True)
        code(b, f"""
            {g} = {echo}({x})
            next({g})
            {g}.send(1)
            {k} = {g}.send({integer(draw, 1, 3)})
            """)
        fold(b, k, var.shape, 4 * bound)
        return
    gen, outer = _generators(draw, b)
    if kind == "sum":
        call = choose(draw, (f"{gen}({x}, {integer(draw, 1, 3)})", f"{outer}({x})"))
        code(b, f"{k} = sum({call})")
        fold(b, k, var.shape, 6 * bound)
    elif kind == "tuple":
        code(b, f"""
            a, b, c, d = tuple({outer}({x}))
            {k} = a - b + c * d
            """)
        fold(b, k, var.shape, 4 * bound * bound + 4 * bound + 4)
    elif kind == "next":
        code(b, f"""
            {g} = {gen}({x}, 3)
            {k} = next({g})
            {k} = {k} + next({g}) * 0.5
            """)
        fold(b, k, var.shape, 2 * bound)
    elif kind == "genexp":
        form = choose(draw, ("sum", "tuple", "max", "any"))
        if form == "sum":
            code(b, f"{k} = sum(({x} * i for i in range({integer(draw, 1, 3)}) if i != 1), {x})")
            fold(b, k, var.shape, 4 * bound)
        elif form == "tuple":
            code(b, f"{k} = tuple(torch.tanh({x} + i) for i in range(3))")
            fold(b, f"{k}[0] - {k}[2] + len({k})", var.shape, 5)
        elif form == "max":
            code(b, f"{k} = max(i * i for i in range({var.numel}) if i % 2 == 0)")
            fold(b, f"{x} + {k}", var.shape, bound + var.numel ** 2)
        else:
            code(b, f"{k} = any(d > 2 for d in {x}.shape) or all(d == 1 for d in {x}.shape)")
            fold(b, f"{x} * int({k})", var.shape, bound)
    elif kind == "zip":
        code(b, f"""
            {k} = {x}
            for i, (p, q) in enumerate(zip({gen}({x}, 3), {outer}({x}))):
                {k} = {k} + p * 0.25 - q * i
            """)
        fold(b, k, var.shape, 12 * bound)
    else:
        b.tag("graph-break-site")
        code(b, f"""
            {g} = {gen}({x}, 3)
            {k} = next({g})
            {GRAPH_BREAK}
            {k} = {k} + next({g})
            """)
        fold(b, k, var.shape, 3 * bound)


@construct("comprehension")
def comprehension(draw, b: Builder) -> None:
    """List, dict and set comprehensions, filtered and nested, over ranges and tensor rows."""
    var, x, bound = operand(draw, b)
    k = b.fresh("k")
    kind = choose(draw, ("list", "dict", "set", "nested", "rows", "dict-tensors"))
    n = integer(draw, 1, 4)
    if kind == "list":
        code(b, f"{k} = [{x} * i for i in range({n}) if i % 2 == 0]")
        fold(b, f"sum({k}) + len({k})", var.shape, 4 * bound + 4)
    elif kind == "dict":
        code(b, f"{k} = {{i: i * i for i in range({n + 1}) if i != {integer(draw, 0, 2)}}}")
        fold(b, f"{x} + sum({k}.values()) - len({k})", var.shape, bound + 30)
    elif kind == "set":
        code(b, f"{k} = {{i % 3 for i in range({n + 2})}}")
        fold(b, f"{x} * len({k}) + (2 in {k}) + sorted({k})[-1]", var.shape, 3 * bound + 3)
    elif kind == "nested":
        if boolean(draw):
            code(b, f"{k} = [[i * j for j in range({n})] for i in range(3)]")
            fold(b, f"{x} + sum(sum(r) for r in {k})", var.shape, bound + 40)
        else:
            code(b, f"{k} = [{x} * i + j for i in range(2) for j in range({n}) if i != j]")
            fold(b, f"sum({k}) * 0.25", var.shape, 2 * bound + 8)
    elif kind == "rows":
        rows = x if var.shape else f"{x}.reshape(1)"
        code(b, f"{k} = torch.stack([torch.tanh(r).sum() for r in {rows}])")
        fold(b, f"{x} + {k}.sum()", var.shape, bound + var.numel)
    else:
        code(b, f"{k} = {{f'k{{i}}': {x} + i for i in range({n})}}")
        fold(b, f"{k}['k0'] - len({k})", var.shape, bound + 4)


@construct("comprehension-graph-break")
def comprehension_break(draw, b: Builder) -> None:
    """A comprehension whose body (or filter) breaks the graph: `graph_break()` or `print()`."""
    var, x, bound = operand(draw, b)
    k = b.fresh("k")
    brk = choose(draw, (GRAPH_BREAK, "print('syntax-comprehension', i)"))
    kind = choose(draw, ("list", "dict", "filter", "nested"))
    n = integer(draw, 1, 3)
    b.tag("print" if brk != GRAPH_BREAK else "graph-break-site")
    if kind == "list":
        code(b, f"{k} = [{x} * i + ({brk} or 0) for i in range({n})]")
        fold(b, f"sum({k})", var.shape, n * n * bound)
    elif kind == "dict":
        code(b, f"{k} = {{i: {x} - i + ({brk} or 0) for i in range({n})}}")
        fold(b, f"{k}[0] * len({k})", var.shape, 3 * bound)
    elif kind == "filter":
        code(b, f"{k} = [{x} + i for i in range({n}) if {brk} is None and i != 1]")
        fold(b, f"{x} + sum({k})", var.shape, (n + 1) * bound + 3)
    else:
        code(b, f"{k} = [[{x} * j for j in range(i + 1) if {brk} is None] for i in range(2)]")
        fold(b, f"{k}[1][1] - {k}[0][0] + len({k})", var.shape, 2 * bound + 2)
