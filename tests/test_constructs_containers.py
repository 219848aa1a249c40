"""Issue 14, constructs 3 and 4: a container mutation that is the only one, and order as state (key,
attribute and list order compared by the effects oracle). The campaigns that find the matching Dynamo
mutants are in test_mutants_cells.py."""
from __future__ import annotations

import ast
from collections import Counter
from functools import lru_cache

from dynfuzz.generators import case_seed, draw_case, programs
from dynfuzz.generators.case import case_from_program
from dynfuzz.generators.hypothesis_compat import data_from_seed
from dynfuzz.oracles.sections import section
from dynfuzz.oracles.snapshot import diff, take
from dynfuzz.run.execute import observe
from dynfuzz.sample import intended

N = 200
TAGS = ("sole-mutation", "sole-list", "sole-dict", "order-state", "order-dict", "order-attr", "order-list",
        "order-new", "order-readd", "order-overwrite", "order-reinsert")


@lru_cache(maxsize=1)
def cases():
    return tuple(draw_case(case_seed(41, i), ("effects",)) for i in range(N))


def test_each_construct_has_a_share_of_the_family():
    counts = Counter(t for c in cases() for t in c.tags)
    for tag in TAGS:
        assert counts[tag] >= 0.02 * N, (tag, counts[tag])


def test_construct_programs_run_eagerly():
    ours = [c for c in cases() if c.tags & {"sole-mutation", "order-state"}]
    bad = [c for c in ours if not intended(c, observe(c.source, c.entry, "cpu", None, "eager"))]
    assert len(bad) <= 0.01 * len(ours), bad[0].source if bad else ""


def _writes(source: str) -> list[ast.AST]:
    """Subscript stores and deletions, augmented subscript assignments, and mutating method calls."""
    out = []
    for node in ast.walk(ast.parse(source)):
        targets = node.targets if isinstance(node, (ast.Assign, ast.Delete)) else \
            [node.target] if isinstance(node, ast.AugAssign) else []
        out += [t for t in targets if isinstance(t, ast.Subscript)]
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in (
                "append", "extend", "insert", "pop", "update", "setdefault", "clear", "remove", "sort"):
            out.append(node)
    return out


def _alone(seed: int):
    """A program made of its one featured fragment (no extra fragments that could touch containers)."""
    program = data_from_seed(seed).draw(programs(("effects",), max_fragments=1))
    return case_from_program(program, seed=seed)


def test_a_sole_mutation_is_one_write_that_changes_the_container():
    alone = [c for c in map(_alone, range(200)) if "sole-mutation" in c.tags][:15]
    assert len(alone) >= 5
    for case in alone:
        entry = case.source[case.source.index("def f("):case.source.index("def inputs(")]
        assert len(_writes(entry)) == 1, case.source
        first = observe(case.source, case.entry, "cpu", None, "eager").calls[0]
        changed = [d for root in ("args", "state") for d in diff(section(first.before, root),
                                                                 section(first.state, root), root)
                   if d[1] != "storage"]
        assert changed, case.source


class Obj:
    pass


def _obj(*names):
    o = Obj()
    for n in names:
        setattr(o, n, 1)
    return o


def test_snapshot_diff_tells_attribute_order_from_attribute_sets():
    same_order = diff(take(_obj("a", "z", "y")), take(_obj("a", "z", "y")))
    other_order = diff(take(_obj("a", "z", "y")), take(_obj("a", "y", "z")))
    other_set = diff(take(_obj("a", "z")), take(_obj("a", "y")))
    assert not same_order
    assert [d[1] for d in other_order] == ["attribute-order"]
    assert [d[1] for d in other_set] == ["attributes"]


def test_snapshot_diff_compares_dict_key_order_and_list_order():
    assert [d[1] for d in diff(take({"a": 1, "b": 2}), take({"b": 2, "a": 1}))] == ["keys"]
    assert diff(take([1, 2, 3]), take([1, 3, 2]))
