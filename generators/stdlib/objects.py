"""Standard-library objects Dynamo wraps with a model of their own: `copy.deepcopy`, `locals()`, weak
references (`weakref.ref`, `WeakKeyDictionary`), a seeded `random.Random`, `itertools.count` and
`range` iterators that outlive one call, NumPy arrays passed in as arguments, and augmented assignment
on plain ints (`<<=`, `>>=`, `//=`, `%=`, `/=`).

Each is its own builder entry or guard kind (`wrap_weakref` and the weakref-alive guard, the count- and
range-iterator guards, `wrap_numpy_ndarray`, `call_deepcopy`, `call_locals`, `call_random_fn`), so a wrong
model shows as a wrong number folded into a tensor output or as a stale guard on the re-call.
"""
from __future__ import annotations

from ..builder import Builder
from ..fragments import fragment
from ..ir import CodeExpr
from .common import FAMILY, Ctx, Snip, area


def _deepcopy(c: Ctx) -> Snip:
    c.use_import("copy")
    src, cp, r = c.names("dc", "cp", "dv")
    lst = c.ints()
    t = c.tensor.name
    form = c.choose((
        f"{cp} = copy.deepcopy({src}); {cp}['k'].append(9); {r} = len({src}['k']) * 10 + len({cp}['k'])",
        f"{cp} = copy.copy({src}); {cp}['k'].append(9); {r} = len({src}['k']) * 10 + len({cp}['k'])",
        f"{cp} = copy.deepcopy({src}['k']); {cp}.reverse(); {r} = {cp}[0] - {src}['k'][0] + 20",
    ))
    return Snip([f"{src} = {{'k': list({lst}), 'd': {t}.dim()}}", *form.split("; ")], r, 60)


def _locals(c: Ctx) -> Snip:
    a, b2, r = c.names("la", "lb", "lc")
    d = c.dim()
    form = c.choose((f"{r} = int('{a}' in locals()) + 2 * int('zz_absent' in locals()) + locals()['{a}']",
                     f"{r} = sum(v for k, v in locals().items() if k in ('{a}', '{b2}'))",
                     f"{r} = len([k for k in locals() if k in ('{a}', '{b2}')]) + vars()['{b2}']"))
    return Snip([f"{a} = {d} + 1", f"{b2} = {a} * 2", form], r, 40)


def _weakref(c: Ctx) -> Snip:
    c.use_import("weakref")
    name = c.b.fresh("BOX_")
    c.helper(f"class {name.title()}:\n    def __init__(self, v):\n        self.v = v\n")
    c.b.add_global(name, CodeExpr(f"{name.title()}({c.integer(1, 6)})"))
    ref, r = c.names("wr", "wv")
    form = c.choose((f"{r} = {ref}().v + int({ref}() is {name})",
                     f"{r} = ({ref}() or {name}).v * 2 + int(isinstance({ref}, weakref.ref))",
                     f"{r} = weakref.WeakKeyDictionary({{{name}: 3}})[{name}] + {ref}().v"))
    return Snip([f"{ref} = weakref.ref({name})", form], r, 20)


def _random(c: Ctx) -> Snip:
    c.use_import("random")
    rng, r = c.names("rg", "rv")
    seed = c.integer(0, 99)
    form = c.choose((f"{r} = {rng}.randint(0, 9) + {rng}.randint(0, 9)",
                     f"{r} = round({rng}.random() * 10, 6) + {rng}.choice([1, 2, 3])",
                     f"{r} = round({rng}.uniform(-2, 2), 6) + {rng}.randrange(5)"))
    return Snip([f"{rng} = random.Random({seed})", form], r, 20)


def _iterators(c: Ctx) -> Snip:
    c.use_import("itertools")
    (r,) = c.names("iv")
    make = c.choose((f"itertools.count({c.integer(0, 5)})", f"itertools.count({c.integer(0, 3)}, 2)",
                     f"iter(range({c.integer(3, 9)}, 60))"))
    where = c.choose(("global", "arg"))
    if where == "global":
        name = c.b.fresh("IT_")
        c.b.add_global(name, CodeExpr(make))
    else:
        name = c.b.fresh("itv")
        param = c.b.add_value_input(name, CodeExpr(make))
        param.per_call[1] = CodeExpr(make)
    form = c.choose((f"{r} = next({name}) + next({name})", f"{r} = next({name}) * 2",
                     f"{r} = sum(next({name}) for _ in range(2))"))
    return Snip([form], r, 60)


def _ndarray_arg(c: Ctx) -> Snip:
    c.use_import("numpy", "np")
    name, r = c.names("arr", "av")
    values = c.choose(([1.0, 2.0, 3.0], [0.5, -1.5], [4.0]))
    param = c.b.add_value_input(name, CodeExpr(f"np.array({values!r}, dtype=np.float32)"))
    if c.flag():
        param.per_call[1] = CodeExpr(f"np.array({c.choose(([2.0, 1.0, 0.0], [3.0, 3.0]))!r}, dtype=np.float32)")
    form = c.choose((f"{r} = float(({name} * 2).sum()) + {name}.shape[0]",
                     f"{r} = float(np.abs({name}).max()) + {name}.ndim + {name}.size",
                     f"{r} = float(torch.from_numpy({name}).sum()) + len({name})"))
    return Snip([form], r, 40)


def _int_augassign(c: Ctx) -> Snip:
    (n,) = c.names("ia")
    steps = [c.choose((f"{n} <<= 2", f"{n} >>= 1", f"{n} //= 2", f"{n} %= 5", f"{n} |= 3", f"{n} ^= 6",
                       f"{n} &= 7", f"{n} **= 2", f"{n} -= 1", f"{n} *= 3")) for _ in range(c.integer(2, 4))]
    clamp = [f"{n} = max(min({n}, 64), -64)"]
    lines = [f"{n} = {c.dim()} + 1"]
    for step in steps:
        lines += [step, *clamp]
    if c.flag():
        lines += [f"{n} /= 4", f"{n} = round({n} * 4)"]
    return Snip(lines, n, 64)


POOL = (_deepcopy, _locals, _weakref, _random, _iterators, _ndarray_arg, _int_augassign)


@fragment(FAMILY, FAMILY, "stdlib-objects", weight=7)
def stdlib_objects(draw, b: Builder) -> None:
    """deepcopy, locals(), weak references, a seeded Random, long-lived iterators, NumPy array arguments and
    augmented int assignment, each folded into an output."""
    area(draw, b, POOL)

