"""The one composer: draws an entry function from the fragments of the requested families.

`programs(families)` is the public strategy; it builds inputs, draws a few
fragments (first from `basic`, so every program computes something), adds the
return statement, `inputs(device, call)` and the call plan, and yields an
`ir.Program`.
"""
from __future__ import annotations

from dataclasses import replace

from hypothesis import strategies as st

from . import ir
from .builder import Builder, InputParam, place_entry
from .choose import choose, integer
from .fragments import REGISTRY, Fragment, disabled_constructs

SHAPES = ((4,), (3, 4), (2, 3), (4, 4), (2,), (1, 4), (3,), (2, 2, 3))

# Extra weight of a family's fragments in the default mix (no --family given): the syntax, stdlib and classes
# families bring 422 of the table's 536 weight, which left the small families' constructs (layout, out= aliases,
# conds closing over outer tensors, unbacked sizes) under 2% of programs. `--family` tables are unchanged.
DEFAULT_MIX_BOOST = {"conds": 3, "resizes": 3}
# Families that are a way of running a program rather than constructs of it: asked for alone (`--family
# export`), their fragment is the featured one and the rest of the program is drawn from the default mix.
OVERLAY_FAMILIES = ("export",)
# Families drawn only when asked for by name (`--family frontier`), never in the default mix: constructs under Dynamo
# settings torch still ships off (generators/classes/build_class.py, generators/closures/nested_breaks.py). The
# default mix, and so what every recorded seed draws, stays as it was.
OPT_IN_FAMILIES = ("frontier",)


def family_names() -> list[str]:
    return sorted(REGISTRY)


def _table(families: tuple[str, ...]) -> list[Fragment]:
    """Fragments to draw from, each repeated by weight; `basic` first so shrinking lands on it."""
    names = list(families) if families else [n for n in family_names() if n not in OPT_IN_FAMILIES]
    unknown = [n for n in names if n not in REGISTRY]
    if unknown:
        raise ValueError(f"unknown family {unknown[0]!r}; known: {', '.join(family_names())}")
    ordered = (["basic"] if "basic" in names else []) + [n for n in names if n != "basic"]
    off = disabled_constructs()
    boost = DEFAULT_MIX_BOOST if not families else {}
    table = [f for name in ordered for f in REGISTRY[name] if not off.intersection(f.tags)
             for _ in range(f.weight * boost.get(name, 1))]
    return table


@st.composite
def programs(draw, families: tuple[str, ...] = (), max_fragments: int = 4, picker=None) -> ir.Program:
    """A valid-by-construction program. `programs(("closures",))` draws from one family plus `basic` filler.

    `picker(draw, table)`, when given, replaces the uniform draw of each fragment from its table: coverage-
    guided campaigns weight fragments through it. It must record its pick as the same choice `choose` would
    (a forced draw of the index), so that the program re-draws from its choices alone, without the picker.
    """
    pick = picker or choose
    overlay = bool(families) and set(families) <= set(OVERLAY_FAMILIES)
    table = _table(() if overlay else families)
    featured = ([f for f in _table(families) if f.family in families] if overlay else
                [f for f in table if f.family != "basic"]) or table
    b = Builder()
    b.nestable = [f for f in table if f.nestable]
    b.picker = picker
    n_inputs = integer(draw, 1, 2)
    for i in range(n_inputs):
        shape = choose(draw, SHAPES)
        b.add_input("xyz"[i], shape, offset=0.5 * i)
    # One featured construct is always drawn, so every case exercises its family.
    use(draw, b, pick(draw, featured))
    # A "one more?" flag before each extra fragment (not a count drawn up front) lets the
    # shrinker delete any single fragment, so failing programs shrink to the construct that matters.
    extras = 0
    while extras < max_fragments - 1 and integer(draw, 0, 3) != 0:  # go on with probability 3/4
        use(draw, b, pick(draw, table))
        extras += 1
    return finish(b)


def use(draw, b: Builder, frag: Fragment) -> None:
    """Draw one fragment into the builder and record the tags it exercises.

    A fragment that changes the call plan (statements in `between`, per-call inputs, more calls) is
    also tagged `plan-<fragment>`: a divergence that first shows on a re-call is keyed by it.
    """
    before = _plan_size(b)
    frag.draw(draw, b)
    b.tag(*frag.tags)
    if _plan_size(b) != before:
        b.tag("plan-" + frag.name.replace("_", "-"))


def _plan_size(b: Builder) -> tuple[int, int, int]:
    return len(b.between), sum(len(p.per_call) for p in b.params), b.calls


def finish(b: Builder) -> ir.Program:
    """Assemble the module: imports, globals and helpers, the entry, `inputs`, `CALLS`, `between`."""
    values: list[ir.Expr] = []
    if b.root.tensors:
        values.append(b.root.tensors[-1].expr)
    values.extend(b.returns)
    ret = values[0] if len(values) == 1 else ir.TupleExpr(tuple(values))
    params = tuple(ir.Param(p.name) for p in b.params)
    entry = ir.Def(b.entry, params, (*b.root.stmts, ir.Return(ret)), tuple(b.entry_decorators))
    if b.entry_factory is not None:
        entry = place_entry(b.entry_factory, entry)
    body: list[ir.Stmt] = [*b.imports, *b.module, entry, *b.after_entry, inputs_def(b.params)]
    if "export" in b.compile_options:  # exported at one call's arguments: Note [What an export run is judged on]
        b.calls = 1
    if b.calls != 2:
        body.append(ir.Assign(ir.Name("CALLS"), ir.Const(b.calls)))
    if b.compile_options:
        items = tuple((ir.Const(k), ir.Const(v)) for k, v in sorted(b.compile_options.items()))
        body.append(ir.Assign(ir.Name("COMPILE_OPTIONS"), ir.DictExpr(items)))
    if b.dynamo_config:
        items = tuple((ir.Const(k), ir.Const(v)) for k, v in sorted(b.dynamo_config.items()))
        body.append(ir.Assign(ir.Name("DYNAMO_CONFIG"), ir.DictExpr(items)))
    if b.between:
        body.append(ir.Def("between", (ir.Param("call"),), tuple(b.between)))
    program = ir.Program(tuple(body), b.entry, frozenset(b.tags), intended_error=b.intended_error,
                         dynamo_config=tuple(sorted(b.dynamo_config.items())))
    if b.eager_variant is not None:
        program = replace(program, eager_program=b.eager_variant(program))
    return program


def inputs_def(params: list[InputParam]) -> ir.Def:
    stmts: list[ir.Stmt] = [ir.Assign(ir.Name(p.name), p.make) for p in params]
    for p in params:
        for call_index, expr in sorted(p.per_call.items()):
            stmts.append(ir.If(ir.BinOp(ir.Name("call"), "==", ir.Const(call_index)),
                               (ir.Assign(ir.Name(p.name), expr),)))
    result = ir.TupleExpr(tuple(ir.Name(p.name) for p in params))
    return ir.Def("inputs", (ir.Param("device"), ir.Param("call", ir.Const(0))), (*stmts, ir.Return(result)))
