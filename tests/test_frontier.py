"""The opt-in `frontier` family: classes Dynamo builds itself (`enable_trace_load_build_class`) and graph breaks
resumed inside nested calls (`nested_graph_breaks`). It is drawn only when asked for, each construct carries its
setting in DYNAMO_CONFIG, its programs run eagerly, its clean forms agree with torch.compile (so what a trial
finds is the mutant's), and a short campaign finds each construct's Dynamo mutant (harness/mutants/frontier.py),
which the same campaign with the construct switched off does not."""
from __future__ import annotations

import ast

import pytest
from dynfuzz.generators import case_seed, draw_case
from dynfuzz.generators.compose import _table
from dynfuzz.mutants import load
from dynfuzz.run.execute import observe
from dynfuzz.sample import intended

from tests.conftest import judged, run_source

FAMILY = ("frontier",)
SETTINGS = {"build-class": "enable_trace_load_build_class", "nested-break-closures": "nested_graph_breaks"}
# mutant -> (its construct, seed-0 frontier cases, the other construct off, that find it with margin)
MUTANTS = {"build-class-method-write-dropped": ("build-class", 20),
           "nested-break-cell-write-dropped": ("nested-break-closures", 20)}
# programs a real torch bug makes diverge on torch 2.13 and 2.14.1 (a frame cell snapshotted into the methods
# of a class Dynamo builds): not the clean forms the agreement test checks
KNOWN_BAD = "build-class-captured"


def _cases(n: int, seed: int = 0):
    return [draw_case(case_seed(seed, i), FAMILY) for i in range(n)]


def _entry(case) -> ast.FunctionDef:
    return next(n for n in ast.parse(case.source).body if isinstance(n, ast.FunctionDef) and n.name == case.entry)


def test_the_family_is_drawn_only_when_asked_for():
    assert {f.name for f in _table(FAMILY)} == {"build_class", "nested_break_closures"}
    assert not [f for f in _table(()) if f.family == "frontier"]
    assert not any(case.tags & set(SETTINGS) for case in (draw_case(case_seed(0, i)) for i in range(40)))


def test_each_construct_carries_its_setting_and_draws_what_it_names():
    seen = set()
    for case in _cases(40):
        body = _entry(case).body
        for construct, setting in SETTINGS.items():
            if construct in case.tags:
                seen.add(construct)
                assert case.dynamo_config.get(setting) is True, case.source
        if "build-class" in case.tags:
            assert any(isinstance(s, ast.ClassDef) for s in body), case.source
        if "nested-break-closures" in case.tags:
            nested = [s for s in body if isinstance(s, ast.FunctionDef)]
            assert any("graph_break" in ast.unparse(d) and any(isinstance(n, ast.Nonlocal) for n in d.body)
                       for d in nested), case.source
    kinds = {t for case in _cases(60) for t in case.tags if t.startswith(("build-class-", "nested-break-"))}
    assert {"build-class-attrs", "build-class-cells", "build-class-super", "build-class-class-write",
            "build-class-captured", "nested-break-deep", "nested-break-list", "nested-break-global",
            "nested-break-tensor-cell", "nested-break-after"} <= kinds
    assert seen == set(SETTINGS)


def test_programs_run_eagerly():
    for case in _cases(30, seed=3):
        obs = observe(case.source, case.entry, "cpu", None, "eager")
        assert intended(case, obs), case.source


def test_clean_forms_agree_with_torch_compile():
    """Without the forms a real torch bug breaks, the family's programs compile to what eager computes: a
    campaign's finding on them is a mutant's, or a new bug."""
    clean = [case for case in _cases(24, seed=5) if KNOWN_BAD not in case.tags][:8]
    assert len(clean) >= 6
    for case in clean:
        res = run_source(case.source, dynamo_config_items=case.dynamo_config_items)
        if res.skipped:
            pytest.skip(res.skipped)
        assert not res.findings, (case.source, [f.message for f in res.findings])


@pytest.mark.parametrize("mutant", sorted(MUTANTS))
def test_the_mutant_names_its_construct(mutant):
    assert load()[mutant].construct == MUTANTS[mutant][0]


def _trial(trial, construct: str, on: bool):
    """The trial with `construct` on and the other off, or with `construct` off; both mutants applied."""
    other = next(c for c in SETTINGS if c != construct)
    cases = next(n for c, n in MUTANTS.values() if c == construct)
    t = trial(sorted(MUTANTS), "frontier", cases, disable=other if on else construct)
    judged(t.summary, cases // 2)
    return t


@pytest.mark.parametrize("mutant", sorted(MUTANTS))
def test_a_short_campaign_finds_the_mutant_and_not_without_the_construct(trial, mutant):
    """Two campaigns, each with one construct on: each finds its construct's mutant and not the other's."""
    construct = MUTANTS[mutant][0]
    assert _trial(trial, construct, on=True).finds(mutant, construct)
    assert not _trial(trial, construct, on=False).finds(mutant)
