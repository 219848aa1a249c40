"""Small statement and expression forms: f-strings and `str.format` building dict keys, starred
unpacking and starred calls, keyword-only parameters with defaults, walrus and chained comparisons,
`del` of a local then rebinding it, imports inside the entry, graph breaks at different places (in a
loop, in an inlined helper, in a `try`, in a handler, in a nested function), and `print`.
"""
from __future__ import annotations

from ..builder import Builder
from ..choose import boolean, choose, integer
from .common import GRAPH_BREAK, code, construct, fold, operand


@construct("fstring-key")
def fstring_key(draw, b: Builder) -> None:
    """A lookup whose key is built by an f-string (with a format spec) or `str.format` from sizes."""
    var, x, bound = operand(draw, b)
    d, k = b.fresh("table"), b.fresh("k")
    code(b, f"{d} = {{'w0': 1.5, 'w1': -0.5, 'w2': 2.0, 'w3': 0.25, 'n_01': 3, 'n_02': -1, 'b_2_x': 1}}")
    form = choose(draw, ("fstring", "spec", "format", "percent", "join"))
    key = {
        "fstring": f"f'w{{{x}.dim()}}'",
        "spec": f"f'n_{{{x}.dim() % 2 + 1:02d}}'",
        "format": "'b_{}_{}'.format(2, 'x')",
        "percent": f"'w%d' % ({x}.dim() % 4)",
        "join": "'_'.join(['b', str(2), 'x'])",
    }[form]
    code(b, f"{k} = {d}[{key}]")
    if boolean(draw):
        code(b, f"{k} = {k} + len(f'{{{x}.shape[0] if {x}.dim() else 0:>3}}|{{{k}!r}}')")
    fold(b, f"{x} * {k}", var.shape, bound * 40)


@construct("starred-unpack")
def starred(draw, b: Builder) -> None:
    """`a, *rest = ...`, `*_, last = shape`, `f(*args, **kw)`, `[*a, *b]` and `{**d1, **d2}`."""
    var, x, bound = operand(draw, b)
    k = b.fresh("k")
    kind = choose(draw, ("assign", "shape", "call", "list", "dict"))
    if kind == "assign":
        code(b, f"""
            first, *rest = [{x}, {x} * 2, {x} * 0.5][:{integer(draw, 1, 3)}]
            {k} = first + sum(rest)
            """)
        fold(b, k, var.shape, 4 * bound)
    elif kind == "shape":
        code(b, f"""
            *_, last = (1, *{x}.shape)
            {k} = {x} * last
            """)
        fold(b, k, var.shape, 4 * bound)
    elif kind == "call":
        helper = b.fresh("syn_star")
        code(b, f"""
            def {helper}(*args, **kw):
                return sum(args) * kw.get('scale', 1) + len(kw)
            """, module=True)
        kw = choose(draw, ("{'scale': 2}", "{}", "{'scale': 0.5, 'other': 1}"))
        code(b, f"{k} = {helper}(*[{x}, {x} * 0.5], **{kw})")
        fold(b, k, var.shape, 3 * bound + 2)
    elif kind == "list":
        code(b, f"""
            {k} = [*[{x}, {x} + 1], *({x} * 2,)]
            {k} = {k}[-1] - {k}[0] + len({k})
            """)
        fold(b, k, var.shape, 3 * bound + 3)
    else:
        code(b, f"""
            {k} = {{**{{'a': 1, 'b': 2}}, **{{'b': {integer(draw, 3, 5)}, 'c': {x}}}}}
            {k} = {k}['c'] * {k}['b'] + len({k}) + list({k})[0].count('a')
            """)
        fold(b, k, var.shape, 5 * bound + 4)


@construct("kwonly-defaults")
def kwonly_defaults(draw, b: Builder) -> None:
    """A helper with positional-only, keyword-only and defaulted parameters and `**extra`, called with
    some of them."""
    var, x, bound = operand(draw, b)
    helper, k = b.fresh("syn_kw"), b.fresh("k")
    code(b, f"""
        def {helper}(t, /, n=1, *, scale=2.0, shift=0.5, **extra):
            return t * scale + shift * n + len(extra)
        """, module=True)
    args = choose(draw, ("", ", 2", ", scale=0.5", ", n=3, shift=-1.0", ", scale=1.0, flag=True"))
    code(b, f"{k} = {helper}({x}{args})")
    fold(b, k, var.shape, 2 * bound + 4)


@construct("walrus", "chained-compare")
def walrus_compare(draw, b: Builder) -> None:
    """Assignment expressions (in an `if`, in a comprehension filter) and chained comparisons on sizes."""
    var, x, bound = operand(draw, b)
    k, n = b.fresh("k"), b.fresh("n")
    lo, hi = choose(draw, ((0, 4), (2, 12), (5, 30)))
    code(b, f"""
        if {lo} < ({n} := {x}.numel()) <= {hi}:
            {k} = {x} * 2
        else:
            {k} = {x} - {n}
        """)
    if boolean(draw):
        y = b.fresh("y")
        code(b, f"{k} = {k} + sum([{y} for i in range(3) if ({y} := i * 2) > 1])")
    else:
        code(b, f"{k} = {k} + (1 if 0 <= {x}.dim() < 2 == 2 else 2)")
    fold(b, k, var.shape, 2 * bound + 30)


@construct("del-rebind", "local-import")
def del_rebind(draw, b: Builder) -> None:
    """`import math` / `from operator import mul` inside the entry, and a local deleted then rebound."""
    var, x, bound = operand(draw, b)
    tmp = b.fresh("tmp")
    mod = b.fresh("mod_")
    imp, use = choose(draw, (
        (f"import math as {mod}", f"{x} * {mod}.cos(0.5) + {mod}.floor(2.5)"),
        (f"from operator import mul as {mod}", f"{mod}({x}, 0.75)"),
        (f"import operator as {mod}", f"{mod}.add({x}, {mod}.neg(1))"),
        (f"from math import pi as {mod}", f"{x} * ({mod} / 4) + 2"),
    ))
    code(b, f"""
        {tmp} = {x} * 2
        {imp}
        del {tmp}
        {tmp} = {use}
        """)
    if boolean(draw):
        code(b, f"""
            for i in range(2):
                {tmp} = {tmp} + i
                del i
            """)
    fold(b, tmp, var.shape, bound + 4)


@construct("graph-break-site")
def graph_break_site(draw, b: Builder) -> None:
    """`torch._dynamo.graph_break()` inside a loop body, an inlined helper, a `try` block, an `except`
    handler, or a nested function; values computed before it are used after it."""
    var, x, bound = operand(draw, b)
    k = b.fresh("k")
    kind = choose(draw, ("loop", "helper", "try", "handler", "nested", "finally", "while", "match", "else",
                         "stack-list", "stack-dict", "lambda", "nested-blocks", "generator-body"))
    if kind.startswith("stack") or kind in ("lambda", "nested-blocks", "generator-body"):
        _break_with_live_state(draw, b, kind, var, x, bound)
        return
    if kind == "loop":
        code(b, f"""
            {k} = {x}
            for i in range({integer(draw, 1, 3)}):
                {k} = {k} * 0.5 + i
                {GRAPH_BREAK}
            """)
        fold(b, k, var.shape, bound + 4)
    elif kind == "helper":
        helper = b.fresh("syn_brk")
        code(b, f"""
            def {helper}(t):
                u = t + 1
                {GRAPH_BREAK}
                return u * 2
            """, module=True)
        code(b, f"{k} = {helper}({x}) - 1")
        fold(b, k, var.shape, 2 * bound + 3)
    elif kind == "try":
        code(b, f"""
            try:
                {k} = {x} + 1
                {GRAPH_BREAK}
                {k} = {k} * 2
            except RuntimeError:
                {k} = {x}
            """)
        fold(b, k, var.shape, 2 * bound + 2)
    elif kind == "finally":
        code(b, f"""
            try:
                {k} = {x} - 1
            finally:
                {GRAPH_BREAK}
                {k} = {k} * 2
            """)
        fold(b, k, var.shape, 2 * bound + 2)
    elif kind == "while":
        code(b, f"""
            {k} = {x}
            i = 0
            while i < {integer(draw, 1, 3)}:
                i += 1
                if i == 2:
                    {GRAPH_BREAK}
                    continue
                {k} = {k} + i
            """)
        fold(b, k, var.shape, bound + 6)
    elif kind == "match":
        code(b, f"""
            match [{x}, 2]:
                case [t, n]:
                    {k} = t * n
                    {GRAPH_BREAK}
                    {k} = {k} - n
                case _:
                    {k} = {x}
            """)
        fold(b, k, var.shape, 2 * bound + 2)
    elif kind == "else":
        code(b, f"""
            try:
                {k} = {x} + 2
            except KeyError:
                {k} = {x}
            else:
                {GRAPH_BREAK}
                {k} = {k} * 0.5
            """)
        fold(b, k, var.shape, bound + 2)
    elif kind == "handler":
        code(b, f"""
            try:
                {k} = {{}}['missing']
            except KeyError:
                {k} = {x} * 3
                {GRAPH_BREAK}
                {k} = {k} - 1
            """)
        fold(b, k, var.shape, 3 * bound + 1)
    else:
        inner = b.fresh("inner")
        code(b, f"""
            def {inner}(t):
                v = t - 1
                {GRAPH_BREAK}
                return v * 0.5
            """)
        code(b, f"{k} = {inner}({x}) + {inner}({x} * 2)")
        fold(b, k, var.shape, 2 * bound + 2)


@construct("print")
def print_call(draw, b: Builder) -> None:
    """`print()` of sizes, an f-string or a tensor, between computations whose values cross it."""
    var, x, bound = operand(draw, b)
    k = b.fresh("k")
    what = choose(draw, (f"'syntax', {x}.dim()", f"f'shape={{tuple({x}.shape)}}'", f"{x}.shape, sep='|'",
                         f"{x}.sum().item() > 0"))
    code(b, f"""
        {k} = {x} + 1
        print({what})
        {k} = {k} * 2
        """)
    fold(b, k, var.shape, 2 * bound + 2)


@construct("seq-ops")
def seq_ops(draw, b: Builder) -> None:
    """Slices with steps on lists, tuples and strings, repetition, augmented assignment on containers,
    and `and`/`or` returning operands rather than booleans."""
    var, x, bound = operand(draw, b)
    k, s = b.fresh("k"), b.fresh("seq")
    kind = choose(draw, ("slice", "repeat", "augassign", "short-circuit"))
    if kind == "slice":
        step = choose(draw, ("::-1", "1::2", ":-1", "::2"))
        code(b, f"""
            {s} = [{x}, {x} * 2, {x} * 3, {x} * 0.5][{step}]
            {k} = {s}[0] + len({s}) + len('abcdef'[{step}]) + sum((1, 2, 3, 4)[{step}])
            """)
        fold(b, k, var.shape, 3 * bound + 20)
    elif kind == "repeat":
        code(b, f"""
            {s} = [{x}] * 2 + [1] * 3
            {k} = sum({s}) + len('ab' * 3) + len((0,) * 4)
            """)
        fold(b, k, var.shape, 2 * bound + 13)
    elif kind == "augassign":
        code(b, f"""
            {s} = [1]
            {s} += [2, 3]
            {s} *= 2
            {k} = (1,)
            {k} += (4,)
            {s}.extend({k})
            {k} = {x} + sum({s}) // 3 + (7 << 1 | 1) % 5
            """)
        fold(b, k, var.shape, bound + 12)
    else:
        none = choose(draw, ("None", "0", "[]"))
        code(b, f"""
            {s} = {none} or {x}
            {k} = ({s} is not None and {x} * 2) + ({none} and 5 or 1)
            """)
        fold(b, k, var.shape, 2 * bound + 5)


@construct("lambda-binding")
def lambda_binding(draw, b: Builder) -> None:
    """Lambdas made in a loop or comprehension (late binding vs a default argument), an immediately called
    lambda, and a lambda as `sorted`'s key."""
    var, x, bound = operand(draw, b)
    k, fs = b.fresh("k"), b.fresh("fns")
    kind = choose(draw, ("late", "default", "immediate", "key"))
    if kind == "late":
        code(b, f"""
            {fs} = []
            for i in range(3):
                {fs}.append(lambda t: t * i)
            {k} = sum(fn({x}) for fn in {fs})
            """)
        fold(b, k, var.shape, 6 * bound)
    elif kind == "default":
        code(b, f"""
            {fs} = [lambda t, i=i: t + i for i in range(3)]
            {k} = {fs}[0]({x}) * {fs}[2](1)
            """)
        fold(b, k, var.shape, 3 * bound + 3)
    elif kind == "immediate":
        code(b, f"{k} = (lambda a, *, b=2: a * b)({x}, b={integer(draw, 1, 3)})")
        fold(b, k, var.shape, 3 * bound)
    else:
        code(b, f"""
            {fs} = sorted([(2, 'b'), (1, 'c'), (3, 'a')], key=lambda p: p[1])
            {k} = {x} * {fs}[0][0] - {fs}[-1][0]
            """)
        fold(b, k, var.shape, 2 * bound + 1)


def _break_with_live_state(draw, b: Builder, kind: str, var, x: str, bound: float) -> None:
    """Graph breaks that leave state behind to restore: values on the operand stack (inside a list or
    dict display), a lambda's frame, a `with` inside a `try/finally` inside a loop, a generator's body."""
    k = b.fresh("k")
    if kind == "stack-list":
        code(b, f"{k} = {x} + sum([{x}.numel(), ({GRAPH_BREAK} or 0), 2])")
        fold(b, k, var.shape, bound + var.numel + 2)
    elif kind == "stack-dict":
        code(b, f"""
            {k} = {{'a': {x}, 'b': {GRAPH_BREAK}, 'c': 2}}
            {k} = {k}['a'] * {k}['c'] + ({k}['b'] is None)
            """)
        fold(b, k, var.shape, 2 * bound + 1)
    elif kind == "lambda":
        code(b, f"{k} = (lambda t: ({GRAPH_BREAK}, t * 2)[1])({x})")
        fold(b, k, var.shape, 2 * bound)
    elif kind == "nested-blocks":
        code(b, f"""
            {k} = {x}
            for i in range(2):
                try:
                    with torch.no_grad():
                        {k} = {k} + i
                        {GRAPH_BREAK}
                        {k} = {k} * 0.5
                finally:
                    {k} = {k} - 1
            """)
        fold(b, k, var.shape, bound + 4)
    else:
        gen = b.fresh("syn_gen_brk")
        code(b, f"""
            def {gen}(t):
                yield t
                {GRAPH_BREAK}
                yield t * 2
            """, module=True)
        code(b, f"{k} = sum({gen}({x}))")
        fold(b, k, var.shape, 3 * bound)
