"""Swarm testing (`fuzz --swarm`, Note [Swarm windows] in generators/swarm.py), the down-weighting of explained
constructs (Note [Explained constructs are down-weighted] in campaign/swarm_weights.py), and the measure of distinct bugs over
time (bench/distinct.py, `minimized_seconds` in summary.json)."""
from __future__ import annotations

import dataclasses
import importlib.util
import json
import random
from collections import Counter
from pathlib import Path

import pytest
from dynfuzz.generators.case import case_seed, draw_case, redraw
from dynfuzz.generators.compose import programs
from dynfuzz.generators.fragments import REGISTRY
from dynfuzz.generators.hypothesis_compat import data_from_seed
from dynfuzz.generators.swarm import SwarmConfig, SwarmPicker, option_name
from dynfuzz.oracles.model import finding
from dynfuzz.run.compilers import CompileSpec

ROOT = Path(__file__).resolve().parents[1]
FRAGMENTS = {option_name(f): f for frags in REGISTRY.values() for f in frags}
SYMPTOM = finding("outputs", "miscompile", "out[0] values differ", "out[0] values differ")


def _picked(seed: int, config: SwarmConfig) -> list[str]:
    picker = config.picker(seed)
    data_from_seed(seed).draw(programs((), picker=picker))
    return picker.used


def test_a_swarm_case_is_a_function_of_its_seed_and_redraws_from_its_choices_alone():
    config = SwarmConfig()
    for i in range(40):
        seed = case_seed(4, i)
        case = draw_case(seed, (), config)
        assert draw_case(seed, (), config).source == case.source
        again = redraw(case.choices)
        assert (again.source, again.tags, again.dynamo_config_items) == (case.source, case.tags,
                                                                        case.dynamo_config_items)


def test_a_window_draws_only_the_fragments_it_has_on_and_windows_differ():
    config = SwarmConfig(period=8)
    seen_off = 0
    for seed in range(64):
        window = config.window(seed)
        for name in _picked(seed, config):
            if name in FRAGMENTS:
                assert config.enabled(window, name), f"seed {seed} drew {name}, off in window {window}"
    on = [{n for n in FRAGMENTS if config.enabled(w, n)} for w in range(4)]
    for subset in on:
        assert 0.3 * len(FRAGMENTS) < len(subset) < 0.7 * len(FRAGMENTS)
        seen_off += len(FRAGMENTS) - len(subset)
    assert len({frozenset(s) for s in on}) == 4 and seen_off > 0


def test_the_plain_stream_is_untouched_by_swarm_settings():
    """Without `swarm` a seed draws what it always drew (the digest tests pin the programs themselves)."""
    for i in range(10):
        seed = case_seed(0, i)
        assert draw_case(seed).source == draw_case(seed, (), None).source
    assert any(draw_case(case_seed(0, i)).source != draw_case(case_seed(0, i), (), SwarmConfig()).source
               for i in range(10))


def test_a_down_weighted_option_is_drawn_less_but_never_switched_off():
    options = [FRAGMENTS["basic.pointwise"], FRAGMENTS["basic.binary"]]
    config = SwarmConfig(keep=1.0, down={"basic.pointwise": 0.25})
    picker = SwarmPicker(config, 0, random.Random(1))
    data = data_from_seed(1)
    counts = Counter(option_name(picker(data.draw, options)) for _ in range(2000))
    assert 0.12 < counts["basic.pointwise"] / 2000 < 0.28
    off = SwarmConfig(keep=0.0, down={"basic.pointwise": 0.25})  # nothing on: all of them, still weighted
    picker = SwarmPicker(off, 0, random.Random(2))
    assert {option_name(picker(data.draw, options)) for _ in range(200)} == {"basic.pointwise", "basic.binary"}


@dataclasses.dataclass
class _Member:
    seed: int


@dataclasses.dataclass
class _Bucket:
    key: str
    status: str
    explanation: object
    members: list
    explained: object = None


def _explanation(*responsible: str):
    from dynfuzz.triage.explain import Explanation

    return Explanation("outputs", "wrong-value", responsible[0] if responsible else "tensor ops",
                       responsible=responsible, ablated=True)


def test_fragments_an_ok_bucket_explains_are_down_weighted_from_the_next_window_on(tmp_path):
    from dynfuzz.campaign.swarm_weights import DOWN, Swarm

    swarm = Swarm((), tmp_path, SwarmConfig(period=4))
    swarm.next_case(0)
    metadata = "resizes.metadata_op"  # its programs hold `tensor in-place metadata op`s
    swarm.used[0] = ("basic.pointwise", metadata)
    swarm.used[1] = ("resizes.out_variant",)
    explains = _explanation("tensor argument .t_")
    assert swarm.learn([_Bucket("b0", "unminimized", explains, [_Member(0)])]) == []  # not minimized yet
    assert swarm.learn([_Bucket("b1", "ok", explains, [_Member(1)])]) == []  # its program had no such fragment
    assert swarm.learn([_Bucket("b2", "ok", explains, [_Member(0)])]) == [metadata]
    assert swarm.learn([_Bucket("b2", "ok", explains, [_Member(0)])]) == []  # learned once
    assert swarm.down == {metadata: DOWN} and swarm.explained_by == {metadata: "b2"}
    assert swarm.config_for(3).down == {}, "the window already drawing keeps its settings"
    assert dict(swarm.config_for(4).down) == {metadata: DOWN}
    logged = [json.loads(line) for line in (tmp_path / "swarm" / "windows.jsonl").read_text().splitlines()]
    assert [(w["window"], w["down"]) for w in logged] == [(0, {}), (1, {metadata: DOWN})]
    case = swarm.next_case(5)
    assert case.source == draw_case(5, (), swarm.config_for(5)).source
    resumed = Swarm((), tmp_path, SwarmConfig(period=4), saved=swarm.summary())
    assert resumed.down == swarm.down and resumed.learned == swarm.learned


def test_a_campaign_with_swarm_records_it_and_resume_keeps_it(tmp_path):
    from dynfuzz.cli import main

    out = tmp_path / "out"
    assert main(["fuzz", "--swarm", "--guided", "--out", str(out), "--cases", "1"]) == 2
    assert main(["fuzz", "--swarm", "--cases", "2", "--workers", "0", "--no-db", "--no-minimize", "--family",
                 "basic", "--no-progress", "--out", str(out)]) == 0
    summary = json.loads((out / "summary.json").read_text())
    assert summary["swarm"] is True and summary["swarm_state"]["period"] == SwarmConfig().period
    assert (out / "swarm" / "windows.jsonl").read_text().strip()
    assert main(["fuzz", "--resume", str(out), "--no-swarm", "--no-progress"]) == 2  # conflicts with the saved
    plain = tmp_path / "plain"
    assert main(["fuzz", "--cases", "1", "--workers", "0", "--no-db", "--no-minimize", "--family", "basic",
                 "--no-progress", "--out", str(plain)]) == 0
    summary = json.loads((plain / "summary.json").read_text())
    assert summary["swarm"] is False and "swarm_state" not in summary


class _AnsweringQueue:
    """The triage pool's interface, answering every job at once as minimized and reproducing."""

    def __init__(self):
        self.ready, self.job_seconds, self.recycled = [], [], 0

    def submit(self, ident, case, f, meta=None, priority=0):
        from dynfuzz.triage.explain import cheap_explanation
        from dynfuzz.triage.queue import Triaged

        if not ident.startswith("localize "):
            explanation = dataclasses.replace(cheap_explanation(case, f), construct="set argument .add", ablated=True)
            self.ready.append((ident, "done", Triaged(case, f, explanation, "print(1)\n", "reproduces", 0.1)))

    def poll(self, wait=0.0):
        out, self.ready = self.ready, []
        return out


def test_a_bucket_row_says_when_it_first_had_a_minimized_repro(tmp_path):
    from dynfuzz.campaign.campaign import CampaignConfig
    from dynfuzz.campaign.ledger import Ledger

    ledger = Ledger(CampaignConfig(budget=1, out=tmp_path, spec=CompileSpec(), progress=False))
    ledger.triage = _AnsweringQueue()
    ledger.seconds = 12.5
    ledger.record(draw_case(0), SYMPTOM)
    ledger.seconds = 40.0
    for ident, status, payload in ledger.triage.poll():
        ledger.apply_triage(ident, status, payload)
    (row,) = ledger.summary()["buckets"]
    assert row["status"] == "ok" and row["first_seen_seconds"] == 12.5 and row["minimized_seconds"] == 40.0


def _bench():
    spec = importlib.util.spec_from_file_location("distinct", ROOT / "bench" / "distinct.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_bench_distinct_counts_bug_buckets_over_time_and_the_wait_for_a_minimized_repro(tmp_path, capsys):
    def row(key, tier, cls, status, first, minimized=None):
        return {"key": key, "tier": tier, "class": cls, "status": status, "first_seen_seconds": first,
                **({"minimized_seconds": minimized} if minimized is not None else {})}

    summary = {"seconds": 100.0, "seed": 3, "swarm": True, "cases": 50, "queued": 1, "buckets": [
        row("miscompile: a", "miscompile", "wrong-value", "ok", 5.0, 25.0),
        row("crash: b", "crash", "crash", "unminimized", 60.0),
        row("refusal: c", "refusal", "refused", "ok", 1.0, 2.0),
        row("miscompile: d", "miscompile", "wrong-value", "flaky", 30.0)]}
    m = _bench().distinct(summary)
    assert m["bugs"] == 2 and m["buckets"] == 4 and m["bugs_minimized"] == 1 and m["median_to_minimized"] == 20.0
    assert [p["bugs"] for p in m["curve"]] == [1, 1, 1, 2, 2]
    assert [r["key"] for r in m["rows"]] == ["refusal: c", "miscompile: a", "miscompile: d", "crash: b"]
    (tmp_path / "summary.json").write_text(json.dumps(summary))
    assert _bench().main([str(tmp_path), str(tmp_path)]) == 0
    text = capsys.readouterr().out
    assert "swarm on" in text and "2 bug buckets" in text
    assert _bench().main([str(tmp_path / "absent")]) == 2


@pytest.mark.parametrize("flags,expected", [([], False), (["--swarm"], True), (["--no-swarm"], False),
                                            (["--guided"], False)])
def test_the_swarm_flag_and_its_default(flags, expected):
    from dynfuzz.cli import build_parser
    from dynfuzz.cli.flags import swarm

    assert swarm(build_parser().parse_args(["fuzz", *flags])) is expected


def test_sample_swarm_prints_what_a_swarm_campaign_draws_for_a_seed(capsys):
    from dynfuzz.cli import main

    seed = case_seed(3, 9)
    assert main(["sample", "--case-seed", str(seed), "--swarm", "--json"]) == 0
    (printed,) = json.loads(capsys.readouterr().out)
    assert printed["source"] == draw_case(seed, (), SwarmConfig()).source != draw_case(seed).source


def test_a_swarm_campaign_learns_from_each_triage_result_as_it_arrives(tmp_path):
    from dynfuzz.campaign.campaign import Campaign, CampaignConfig

    campaign = Campaign(CampaignConfig(budget=1, out=tmp_path, swarm=True, progress=False))
    campaign.triage = type("Answered", (), {"poll": lambda self: [("ident", "done", None)]})()
    campaign.ledger.apply_triage = lambda *args: None
    campaign.ledger.filer.buckets = {"k": _Bucket("k", "ok", _explanation("tensor argument .t_"), [_Member(7)])}
    campaign.swarm.used[7] = ("resizes.metadata_op",)
    campaign.triage_poll()
    assert campaign.swarm.down == {"resizes.metadata_op": 0.25}
    assert campaign.swarm.summary()["explained_by"] == {"resizes.metadata_op": "k"}
