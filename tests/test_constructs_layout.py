"""Issue 14, constructs 5-8 as generated: their share of the default mix, eager validity, call plans that
go each way, their off switch, and no findings on unmodified torch."""
from __future__ import annotations

from collections import Counter

import pytest
import torch
from dynfuzz.generators import case_seed, draw_case
from dynfuzz.generators.fragments import DISABLE_ENV
from dynfuzz.run.compilers import CompileSpec, make_compiler
from dynfuzz.run.execute import load_program, observe
from dynfuzz.run.judge import judge
from dynfuzz.sample import intended

CONSTRUCTS = {"layout": "resizes", "out-alias": "resizes", "cond-closures": "conds", "unbacked-config": "conds"}
# Older fragments of the two families, which find known torch bugs on unmodified torch.
OLDER = "cond,out-variant,metadata-op,data-op"


def _cases(construct: str, n: int, seed: int = 17) -> list:
    family = CONSTRUCTS[construct]
    drawn = (draw_case(case_seed(seed, i), (family,)) for i in range(4 * n))
    return [c for c in drawn if construct in c.tags][:n]


def test_each_construct_is_at_least_two_percent_of_the_default_mix():
    tags: Counter[str] = Counter()
    n = 400
    for i in range(n):
        tags.update(draw_case(case_seed(0, i)).tags)
    shares = {t: tags[t] / n for t in CONSTRUCTS}
    assert all(share >= 0.02 for share in shares.values()), shares


@pytest.mark.parametrize("construct", sorted(CONSTRUCTS))
def test_construct_programs_run_as_intended_in_eager(construct):
    bad = []
    for case in _cases(construct, 25):
        obs = observe(case.eager_source or case.source, case.entry, "cpu", None, "eager")
        if not intended(case, obs):
            err = obs.setup_error or next((c.error for c in obs.calls if c.error), None)
            bad.append((case.seed, err and err.message))
    assert not bad, bad


@pytest.mark.parametrize("construct", sorted(CONSTRUCTS))
def test_each_construct_has_an_off_switch(construct, monkeypatch):
    monkeypatch.setenv(DISABLE_ENV, construct)
    family = CONSTRUCTS[construct]
    assert not any(construct in draw_case(case_seed(17, i), (family,)).tags for i in range(60))


def test_layout_recalls_with_the_same_shape_and_other_strides():
    changed = Counter()
    for case in _cases("layout", 30):
        ns, _ = load_program(case.source, "plan")
        first, second = ns["inputs"]("cpu", 0), ns["inputs"]("cpu", 1)
        for a, b in zip(first, second):
            if isinstance(a, torch.Tensor) and a.shape == b.shape and a.stride() != b.stride():
                changed[a.is_contiguous()] += 1
    assert changed[True] >= 5 and changed[False] >= 5, changed  # contiguous first, and odd layout first
    tags = set().union(*(c.tags for c in _cases("layout", 60)))
    for tag in ("layout-transposed", "layout-step", "layout-expanded", "layout-channels-last",
                "layout-contiguous", "layout-stride", "layout-view", "layout-out"):
        assert tag in tags, tag


def test_out_alias_writes_and_reads_through_different_paths():
    tags = set().union(*(c.tags for c in _cases("out-alias", 60)))
    for tag in ("out-alias-write-name", "out-alias-write-list", "out-alias-write-dict", "out-alias-write-attr",
                "out-alias-read-name", "out-alias-read-list", "out-alias-read-view", "out-alias-read-numel",
                "out-alias-read-shape", "out-alias-resize", "out-alias-same"):
        assert tag in tags, tag


def test_cond_closure_predicates_take_each_branch_across_the_call_plan():
    for case in _cases("cond-closures", 10):
        ns, _ = load_program(case.source, "plan")
        flips = [[bool(a.mean() > 0) for a in ns["inputs"]("cpu", call) if isinstance(a, torch.Tensor)
                  and a.shape == (4,)] for call in range(3)]
        assert flips[0] != flips[1], case.seed
    tags = set().union(*(c.tags for c in _cases("cond-closures", 40)))
    assert {"cond-nested-outer-local", "cond-closure-global", "pred-flips"} <= tags


@pytest.mark.slow
@pytest.mark.parametrize("family", ["resizes", "conds"])
def test_the_new_constructs_find_nothing_on_unmodified_torch(family, monkeypatch):
    monkeypatch.setenv(DISABLE_ENV, OLDER)
    spec = CompileSpec()
    compiler = make_compiler(spec)
    found = []
    for i in range(15):
        case = draw_case(case_seed(29, i), (family,))
        found += [(case.seed, f.oracle, f.message) for f in judge(case, compiler, spec).findings]
    assert not found, found


def test_nested_blocks_draw_only_nestable_fragments_and_run():
    """`Fragment.nestable` decides what a nested block's body may hold; the block's results reach the output."""
    from dynfuzz.generators.fragments import REGISTRY

    nestable_tags = {t for frags in REGISTRY.values() for f in frags if f.nestable for t in f.tags}
    cases = [c for c in (draw_case(case_seed(43, i), ("basic", "effects")) for i in range(600))
             if "nested-block" in c.tags]
    assert len(cases) >= 4
    for case in cases:
        assert "nb0 = block0()" in case.source and nestable_tags & case.tags
        obs = observe(case.source, case.entry, "cpu", None, "eager")
        assert intended(case, obs), case.seed
