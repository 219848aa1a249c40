"""The closures family: coverage, eager validity, the semantics each tag claims, shrinking, composition."""
from __future__ import annotations

import ast
import symtable
from collections import Counter
from functools import lru_cache

import pytest
from dynfuzz.generators import case_seed, draw_case, programs
from dynfuzz.generators.compose import family_names
from dynfuzz.generators.fragments import REGISTRY
from dynfuzz.generators.render import render
from dynfuzz.run.execute import load_program, observe
from dynfuzz.sample import intended
from hypothesis import HealthCheck, find, settings

N = 200
EXPECTED_TAGS = {
    "nested-closure", "nonlocal-write", "nonlocal-deep", "global-rw", "shadowing", "shadow-cell",
    "sibling-cells", "preexisting-closure", "closure-arg", "closure-container", "shared-root-cell",
    "creates-nested", "escaping-closure", "cell-kinds", "cell-inplace", "lambda", "default-arg", "partial",
    "recursion", "super-class-cell", "method-closure", "graph-break-cell", "plan-cell", "plan-global",
    "plan-closure-swap",
    "cells-agree", "cells-same-object", "cells-same-name", "preexisting-cells", "preexisting-same-name",
    "preexisting-method", "preexisting-graph-break", "preexisting-fresh-writer",
    "cells-shadow", "preexisting-writer", "maker-closure",
}


@lru_cache(maxsize=1)
def cases():
    return tuple(draw_case(case_seed(31, i), ("closures",)) for i in range(N))


def tagged(tag: str):
    found = [c for c in cases() if tag in c.tags]
    assert found, f"no case tagged {tag}"
    return found


def test_every_construct_is_covered():
    counts = Counter(t for c in cases() for t in c.tags)
    declared = {t for frag in REGISTRY["closures"] for t in frag.tags}
    assert declared <= EXPECTED_TAGS
    for tag in EXPECTED_TAGS:
        assert counts[tag] >= 0.02 * N, (tag, counts[tag])


def test_programs_run_eagerly_without_unintended_errors():
    bad = []
    for case in cases():
        obs = observe(case.source, case.entry, "cpu", None, "eager")
        if not intended(case, obs) or any(c.between_error for c in obs.calls):
            bad.append(case)
    assert len(bad) <= 0.01 * N, bad[0].source if bad else ""


def _functions(table: symtable.SymbolTable):
    for child in table.get_children():
        if child.get_type() == "function":
            yield child
        yield from _functions(child)


def _cells(table: symtable.SymbolTable) -> set[str]:
    """Names local to a function scope that one of its children reads as a free variable (none for a class)."""
    if table.get_type() != "function":
        return set()
    return {name for child in table.get_children() if child.get_type() == "function"
            for name in child.get_frees() if name in table.get_locals()}


def test_shadowing_binds_one_name_as_global_parameter_cell_local_and_free():
    for case in tagged("shadowing")[:20]:
        top = symtable.symtable(case.source, "<p>", "exec")
        funcs = list(_functions(top))
        found = False
        for name in top.get_identifiers():
            if not top.lookup(name).is_assigned():
                continue
            as_param_cell = any(name in f.get_parameters() and name in _cells(f) for f in funcs)
            as_local_cell = any(name in _cells(f) and name not in f.get_parameters() for f in funcs)
            as_global_read = any(f.lookup(name).is_global() for f in funcs if name in f.get_identifiers())
            as_free = any(name in f.get_frees() for f in funcs)
            found |= as_param_cell and as_local_cell and as_global_read and as_free
        assert found, case.source


def test_shadow_cell_child_local_hides_parent_cell_and_grandchild_writes_the_child_one():
    for case in tagged("shadow-cell")[:20]:
        top = symtable.symtable(case.source, "<p>", "exec")
        ok = False
        for parent in _functions(top):
            for child in parent.get_children():
                for name in _cells(parent) & _cells(child):
                    grandchild_writes = any(g.lookup(name).is_nonlocal() for g in child.get_children()
                                            if name in g.get_identifiers())
                    ok |= name in child.get_locals() and grandchild_writes
        assert ok, case.source


def test_sibling_closures_capture_different_cells_of_one_name():
    for case in tagged("sibling-cells")[:20]:
        top = symtable.symtable(case.source, "<p>", "exec")
        tree = ast.parse(case.source)
        calls = Counter(n.func.id for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name))
        owners: dict[str, list[str]] = {}
        for fn in _functions(top):
            for name in _cells(fn):
                owners.setdefault(name, []).append(fn.get_name())
        assert any(len(fns) >= 2 or calls[fns[0]] >= 2 for fns in owners.values()), case.source


def _nonlocal_depths(source: str) -> list[int]:
    depths = []

    def visit(node, depth):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef):
                visit(child, depth + 1)
            else:
                if isinstance(child, ast.Nonlocal):
                    depths.append(depth)
                visit(child, depth)

    visit(ast.parse(source), -1)  # a module-level def is depth 0, a function nested in it depth 1
    return depths


def test_nested_closures_write_nonlocal_and_deep_tag_means_depth_two():
    for case in tagged("nested-closure")[:30]:
        assert _nonlocal_depths(case.source), case.source
    for case in tagged("nonlocal-deep")[:30]:
        assert max(_nonlocal_depths(case.source)) >= 2, case.source


def _between(tree: ast.Module) -> ast.FunctionDef:
    return next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "between")


def _escaped(holder):
    if isinstance(holder, list):
        return holder[-1]
    if isinstance(holder, dict):
        return holder["fn"]
    return holder if callable(holder) else holder.fn


def test_escaping_closure_is_stored_by_the_entry_and_called_by_between():
    for case in tagged("escaping-closure")[:20]:
        between = _between(ast.parse(case.source))
        escapes = {n.id for n in ast.walk(between) if isinstance(n, ast.Name) and n.id.startswith("ESC")}
        assert escapes, case.source
        ns, _ = load_program(case.source, "test")
        ns[case.entry](*ns["inputs"]("cpu"))
        for g in escapes:
            fn = _escaped(ns[g])
            assert fn.__closure__ and "<locals>" in fn.__qualname__, case.source
        logs = [k for k in ns if k.startswith("LOG")]
        ns["between"](1)
        assert logs and all(ns[k] for k in logs), case.source


def test_preexisting_closures_exist_with_cells_before_compilation():
    for case in tagged("preexisting-closure")[:20]:
        tree = ast.parse(case.source)
        factories = {n.name for n in tree.body if isinstance(n, ast.FunctionDef)
                     and any(isinstance(s, ast.FunctionDef) for s in n.body)}
        made = [n for n in tree.body if isinstance(n, ast.Assign) and isinstance(n.value, ast.Call)
                and getattr(n.value.func, "id", "").startswith("make_pc") and n.value.func.id in factories]
        assert made, case.source
        ns, _ = load_program(case.source, "test")
        closures = [v for k, v in ns.items() if k.startswith("PC") and callable(v)]
        assert closures and all(fn.__closure__ for fn in closures), case.source


def test_shared_root_cell_entry_shares_a_cell_with_a_helper():
    for case in tagged("shared-root-cell")[:20]:
        ns, _ = load_program(case.source, "test")
        entry_cells = {id(c) for c in ns[case.entry].__closure__ or ()}
        helpers = [v for k, v in ns.items() if k.startswith("HP")]
        assert any(entry_cells & {id(c) for c in h.__closure__} for h in helpers), case.source


def test_creates_nested_returns_a_closure_over_its_own_and_the_entrys_cells():
    for case in tagged("creates-nested")[:20]:
        ns, _ = load_program(case.source, "test")
        entry_cells = {id(c) for c in ns[case.entry].__closure__}
        for maker in (v for k, v in ns.items() if k.startswith("MK")):
            made = maker(__import__("torch").tensor(0.5))
            cells = {id(c) for c in made.__closure__}
            assert cells & entry_cells and cells - entry_cells, case.source


def test_super_methods_close_over_class_cell():
    for case in tagged("super-class-cell")[:10]:
        ns, _ = load_program(case.source, "test")
        kids = [v for k, v in ns.items() if k.startswith("Kid")]
        assert kids and all(k.scale.__code__.co_freevars == ("__class__",) for k in kids), case.source


def test_call_plans_change_state_between_calls():
    for tag, needles in (("plan-global", ("global GV",)), ("plan-cell", ("SET_PC", "HP"))):
        for case in tagged(tag)[:10]:
            text = ast.unparse(_between(ast.parse(case.source)))
            assert any(n in text for n in needles), (tag, case.source)
    for case in tagged("plan-closure-swap")[:10]:
        assert "if call == 1:" in case.source and "CALLS = 3" in case.source, case.source


def _own_statements(fn: ast.FunctionDef):
    """Nodes of `fn`'s body that belong to its own scope (nested function bodies left out)."""
    stack = list(fn.body)
    while stack:
        node = stack.pop()
        yield node
        if not isinstance(node, (ast.FunctionDef, ast.Lambda, ast.ClassDef)):
            stack.extend(ast.iter_child_nodes(node))


def _bound(fn: ast.FunctionDef) -> set[str]:
    declared = {n for s in _own_statements(fn) if isinstance(s, (ast.Nonlocal, ast.Global)) for n in s.names}
    stored = {n.id for n in _own_statements(fn) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    defs = {n.name for n in _own_statements(fn) if isinstance(n, ast.FunctionDef)}
    return (stored | defs | {a.arg for a in fn.args.args}) - declared


def deep_root_cell_write(source: str, entry: str = "f") -> bool:
    """A function nested two or more levels inside the entry rebinds, through `nonlocal`, a cell the
    entry's own frame created (the root-frame cells of seed 000)."""
    f = next(n for n in ast.walk(ast.parse(source)) if isinstance(n, ast.FunctionDef) and n.name == entry)
    root = _bound(f)

    def visit(fn: ast.FunctionDef, depth: int, shadowed: set[str]) -> bool:
        writes = {n for s in _own_statements(fn) if isinstance(s, ast.Nonlocal) for n in s.names}
        if depth >= 2 and (writes & root) - shadowed:
            return True
        hidden = shadowed | _bound(fn)
        return any(visit(d, depth + 1, hidden) for d in _own_statements(fn) if isinstance(d, ast.FunctionDef))

    return any(visit(d, 1, set()) for d in _own_statements(f) if isinstance(d, ast.FunctionDef))


def test_deep_root_cell_write_predicate_tells_programs_apart():
    tagged_deep = [c for c in tagged("nonlocal-deep")]
    assert sum(deep_root_cell_write(c.source) for c in tagged_deep) >= len(tagged_deep) // 3
    shadow_only = [c for c in cases() if c.tags & {"shadowing", "shadow-cell"} and "nested-closure" not in c.tags]
    assert shadow_only and not any(deep_root_cell_write(c.source) for c in shadow_only)


def test_a_deep_root_cell_write_shrinks_to_at_most_15_lines():
    smallest = find(programs(("closures",)), lambda p: deep_root_cell_write(render(p)),
                    settings=settings(database=None, max_examples=300, derandomize=True,
                                      suppress_health_check=list(HealthCheck)))
    lines = [line for line in render(smallest).splitlines() if line.strip()]
    assert len(lines) <= 15, "\n".join(lines)


def test_composes_with_other_families_through_the_one_composer():
    others = [name for name in family_names() if name not in ("closures", "basic")]
    families = ("closures", "basic", *others)
    own = {t for frag in REGISTRY["closures"] for t in frag.tags}
    foreign = {t for name in families if name != "closures" for frag in REGISTRY[name] for t in frag.tags}
    mixed = 0
    for i in range(60):
        case = draw_case(case_seed(7, i), families)
        mixed += bool(case.tags & own) and bool(case.tags & (foreign - own))
        obs = observe(case.eager_source or case.source, case.entry, "cpu", None, "eager")
        assert intended(case, obs), case.source
    assert mixed >= 5


@pytest.mark.slow
def test_a_few_programs_agree_with_torch_compile(judge_source):
    for case in cases()[:6]:
        result = judge_source(case.source)
        assert not result.findings, (case.source, result.findings)
