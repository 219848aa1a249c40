"""Issue 14, constructs 1 and 2: cells that agree in name or contents, pre-existing functions and their
cells. Each test checks that generated programs really have the property their tag claims, since a
mutant is only found when they do; the campaigns that find the mutants are in test_mutants_cells.py."""
from __future__ import annotations

import ast
from collections import Counter
from functools import lru_cache

from dynfuzz.generators import case_seed, draw_case
from dynfuzz.generators.fragments import DISABLE_ENV
from dynfuzz.run.compilers import CompileSpec, make_compiler
from dynfuzz.run.execute import load_program, observe
from dynfuzz.run.judge import judge
from dynfuzz.sample import intended

N = 150
TAGS = ("cells-agree", "cells-same-object", "cells-same-name", "preexisting-cells", "preexisting-same-name",
        "preexisting-method", "preexisting-graph-break", "preexisting-fresh-writer")


@lru_cache(maxsize=1)
def cases():
    return tuple(draw_case(case_seed(14, i), ("closures",)) for i in range(N))


def tagged(tag: str):
    found = [c for c in cases() if tag in c.tags]
    assert found, f"no case tagged {tag}"
    return found


def test_each_construct_has_a_share_of_the_family():
    counts = Counter(t for c in cases() for t in c.tags)
    for tag in TAGS:
        assert counts[tag] >= 0.03 * N, (tag, counts[tag])


def test_construct_programs_run_eagerly():
    ours = [c for c in cases() if c.tags & {"cells-agree", "preexisting-cells"}]
    bad = [c for c in ours if not intended(c, observe(c.source, c.entry, "cpu", None, "eager"))]
    assert len(bad) <= 0.01 * len(ours), bad[0].source if bad else ""


def _cells(ns: dict) -> list:
    """Every cell of a module-level function (or of a function held in a module-level tuple)."""
    out = []
    for v in ns.values():
        for fn in (v if isinstance(v, tuple) else (v,)):
            out.extend(getattr(fn, "__closure__", None) or ())
    return out


def test_same_object_cells_are_two_cells_holding_one_object():
    ours = [c for c in tagged("cells-same-object") if "cells-same-name" not in c.tags]
    preexisting = 0
    for case in ours:
        ns, _ = load_program(case.source, "agree")
        held = Counter(id(cell.cell_contents) for cell in _cells(ns)
                       if not isinstance(cell.cell_contents, (int, float, str)))
        if held and max(held.values()) >= 2:
            preexisting += 1
        else:  # the closures are made inside the compiled frame from the one global object
            assert "make_ag" in case.source[case.source.index("def f("):], case.source
    assert preexisting >= 0.5 * len(ours)


def _entry_locals(source: str) -> set[str]:
    tree = ast.parse(source)
    entry = next(n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name == "f")
    return {t.id for n in ast.walk(entry) if isinstance(n, ast.Assign) for t in n.targets if isinstance(t, ast.Name)}


def test_same_name_constructs_share_a_free_variable_name_with_the_entry():
    for tag in ("cells-same-name", "preexisting-same-name"):
        for case in tagged(tag):
            ns, _ = load_program(case.source, "names")
            freevars = {name for v in ns.values() for fn in (v if isinstance(v, tuple) else (v,))
                        for name in getattr(getattr(fn, "__code__", None), "co_freevars", ())}
            assert freevars & _entry_locals(case.source), case.source


def test_graph_break_construct_calls_a_preexisting_closure_on_both_sides():
    for case in tagged("preexisting-graph-break"):
        entry = case.source[case.source.index("def f("):case.source.index("def inputs(")]
        segments = entry.split("torch._dynamo.graph_break()")
        assert len(segments) >= 2, case.source
        called = {n.func.id for n in ast.walk(ast.parse(case.source)) if isinstance(n, ast.Call)
                  and isinstance(n.func, ast.Name) and n.func.id.isupper()} | {".look"}
        assert any(sum(f"{name}(" in seg for seg in segments) >= 2 for name in called), case.source


def test_the_constructs_switch_off(monkeypatch):
    monkeypatch.setenv(DISABLE_ENV, "cells-agree,preexisting-cells")
    drawn = [draw_case(case_seed(14, i), ("closures",)) for i in range(60)]
    assert not any(c.tags & {"cells-agree", "preexisting-cells"} for c in drawn)


def test_unmodified_torch_agrees_with_eager_on_the_constructs():
    spec = CompileSpec(backend="eager")
    compiler = make_compiler(spec)
    ours = [c for c in cases() if c.tags & {"cells-agree", "preexisting-cells"}][:12]
    for case in ours:
        result = judge(case, compiler, spec)
        values = [f for f in result.findings if f.oracle in ("outputs", "effects")]
        assert not values, (values[0].message, case.source)
