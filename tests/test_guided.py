"""Coverage-guided generation: guided cases re-draw from their choices alone, the bandit steers with a floor,
pool entries are mutated, and a guided campaign logs every case's choices."""
from __future__ import annotations

import base64
import json
import random

import pytest
from dynfuzz.campaign.behaviour_log import Novelty
from dynfuzz.campaign.guided import Bandit, Guide, mutate
from dynfuzz.cli import main
from dynfuzz.generators.case import redraw
from dynfuzz.generators.compose import programs
from dynfuzz.generators.fragments import REGISTRY
from dynfuzz.generators.hypothesis_compat import draw_from_prefix
from hypothesis.database import choices_from_bytes

FAMILIES = ("closures", "effects")


def novel(n: int) -> Novelty:
    """A case's novelty with n behaviours no earlier case had."""
    return Novelty(tuple(f"tracker:T{i}" for i in range(n)), 0, 0.0, n)


def test_fresh_and_mutated_guided_cases_redraw_from_their_choices_alone(tmp_path):
    guide = Guide(seed=3, families=FAMILIES, out=tmp_path)
    fresh = [guide.next_case(i) for i in range(6)]
    for case in fresh:
        guide.observe(case, novel(10))  # every one enters the pool
        assert redraw(case.choices, FAMILIES).source == case.source
        assert case.seed is None  # no seed alone draws a guided case
    guide.share_bounds = (1.0, 1.0)
    mutants = [guide.next_case(6 + i) for i in range(8)]
    assert any(guide.pending[m.choices]["origin"] == "mutant" for m in mutants)
    for case in mutants:
        assert redraw(case.choices, FAMILIES).source == case.source


def test_snippets_and_dynamo_settings_are_arms_too_and_still_redraw(tmp_path):
    """Inside a fragment, a stdlib snippet pool and the Dynamo setting go through the picker as well: the
    bandit credits each snippet and setting it saw, and the cases still re-draw from their choices alone."""
    guide = Guide(seed=5, families=("stdlib",), out=tmp_path)
    for i in range(40):
        case = guide.next_case(i)
        guide.observe(case, novel(3))
        assert redraw(case.choices, ("stdlib",)).source == case.source
    arms = set(guide.bandit.uses)
    assert any("._" in a for a in arms), arms  # snippet functions, named module._function
    assert any(a.startswith("stdlib.") for a in arms)  # fragments


def test_bandit_keeps_a_floor_and_favours_what_found_new_behaviours():
    bandit = Bandit(floor=0.3)
    names = ["a", "a", "b", "c", "d"]  # "a" has twice the default weight
    before = bandit.probabilities(names)
    assert before["a"] == pytest.approx(2 * before["b"])
    for _ in range(50):
        bandit.credit(["c"], 200)
        bandit.credit(["b", "d"], 0)
    after = bandit.probabilities(names)
    assert sum(after.values()) == pytest.approx(1.0)
    assert after["c"] > 2 * before["c"] and after["c"] == max(after.values())
    for name in "abd":
        assert after[name] >= 0.3 * names.count(name) / len(names) - 1e-9


def test_guide_shifts_picks_toward_the_fragment_that_reaches_new_behaviours(tmp_path):
    """Fake behaviours: only cases that drew one fragment reach new ones. The guide must draw it more often."""
    guide = Guide(seed=0, families=("effects",), out=tmp_path, mutate_share=0.0)
    target = "effects.dict_order"

    unguided = Guide(seed=0, families=("effects",), out=tmp_path / "unguided", mutate_share=0.0)
    unguided.bandit = None  # uniform picks: the default mix
    baseline = []
    for i in range(100):
        case = unguided.next_case(i)
        baseline.append(target in unguided.pending.pop(case.choices)["fragments"])
    hits = []
    for i in range(200):
        case = guide.next_case(i)
        hits.append(target in guide.pending[case.choices]["fragments"])
        guide.observe(case, novel(5 if hits[-1] else 0))
    assert sum(hits[-100:]) > 2 * sum(baseline)
    table = [f"{f.family}.{f.name}" for f in REGISTRY["effects"] for _ in range(f.weight)]
    default = table.count(target) / len(table)
    assert guide.bandit.probabilities(table)[target] > 2 * default


def test_mutate_share_follows_what_edited_cases_reach(tmp_path):
    guide = Guide(seed=0, families=("closures",), out=tmp_path)
    assert guide.mutate_share() == pytest.approx(0.3)  # no evidence: halfway between the bounds
    for i in range(20):
        fresh = guide.next_case(i)
        guide.pending[fresh.choices]["origin"] = "fresh"
        guide.observe(fresh, novel(20))
    for i in range(20):
        case = guide.next_case(20 + i)
        guide.pending[case.choices]["origin"] = "mutant"
        guide.observe(case, novel(0))
    assert 0.1 <= guide.mutate_share() < 0.15
    assert guide.summary()["mutate_share"] == round(guide.mutate_share(), 3)


def test_mutation_and_misaligned_prefixes_never_raise():
    rng = random.Random(0)
    strategy = programs(("closures",))
    drawn = draw_from_prefix(strategy, (), seed=1)
    assert drawn is not None
    choices = drawn[1]
    for i in range(40):
        edited = mutate(choices, rng, other=choices[::-1])
        assert isinstance(edited, tuple)
        result = draw_from_prefix(strategy, edited, seed=i)
        if result is not None:
            assert redraw(result[1], ("closures",)).source
    assert draw_from_prefix(strategy, (10**9, -5, 1.5, b"x", "s", True), seed=2) is not None


def test_guided_rejects_the_deterministic_stream_flags(tmp_path, capsys):
    assert main(["fuzz", "--guided", "--shard", "1/2", "--cases", "1", "--no-db", "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--shard" in err[0]


@pytest.mark.slow
def test_guided_campaign_steers_by_behaviours_without_measuring_lines(tmp_path):
    """--guided no longer turns line coverage on: no coverage block, no coverage data; each case's new
    behaviours are logged with its choices, and the first case's are all new."""
    out = tmp_path / "out"
    assert main(["fuzz", "--guided", "--cases", "6", "--workers", "1", "--family", "closures", "--no-db", "--no-minimize",
                 "--no-progress", "--out", str(out)]) == 0
    summary = json.loads((out / "summary.json").read_text())
    assert summary["cases"] == 6
    assert summary["guided"]["cases"].get("fresh", 0) + summary["guided"]["cases"].get("mutant", 0) == 6
    assert "coverage" not in summary and not (out / "coverage").exists()
    rows = [json.loads(line) for line in (out / "guided" / "cases.jsonl").read_text().splitlines()]
    assert len(rows) == 6 and rows[0]["new_behaviours"] and "new_lines" not in rows[0]
    assert sum(len(r["new_behaviours"]) for r in rows) == summary["behaviours"]["distinct"]
    assert all(o["installed"] for o in summary["torch_observers"].values())
    for row in rows:
        choices = choices_from_bytes(base64.b64decode(row["choices"]))
        assert set(redraw(tuple(choices), ("closures",)).tags) == set(row["tags"])


def test_lines_are_bookkeeping_only_when_coverage_is_measured_beside_guidance(tmp_path):
    """With --coverage beside --guided the ledger hands each case's new lines to the guide: they are logged
    and summed by origin, and change nothing it learns (the same novelty, lines or not, earns the same)."""
    with_lines = Guide(seed=1, families=FAMILIES, out=tmp_path / "a")
    without = Guide(seed=1, families=FAMILIES, out=tmp_path / "b")
    for i in range(4):
        case_a, case_b = with_lines.next_case(i), without.next_case(i)
        assert case_a.source == case_b.source
        with_lines.observe(case_a, novel(i), new_lines=100 * i)
        without.observe(case_b, novel(i))
    assert with_lines.bandit.reward == without.bandit.reward and len(with_lines.pool) == len(without.pool)
    assert sum(with_lines.summary()["new_lines_by_origin"].values()) == 600
    assert "new_lines_by_origin" not in without.summary()
    rows = [json.loads(line) for line in with_lines.log.read_text().splitlines()]
    assert [r["new_lines"] for r in rows] == [0, 100, 200, 300]
    assert [len(r["new_behaviours"]) for r in rows] == [0, 1, 2, 3]
