"""Campaign behaviour users rely on: nothing lost on crashes and hangs, dedup, known issues, the example DB."""
import json
from pathlib import Path

import pytest
from dynfuzz.campaign.campaign import Campaign, CampaignConfig
from dynfuzz.run.compilers import CompileSpec
from dynfuzz.triage.known import KnownIssues
from dynfuzz.triage.repro import read_program

from tests.conftest import judged


def run(tmp_path: Path, compiler: str, cases: int, **kw) -> dict:
    config = CampaignConfig(budget=120, out=tmp_path / "out", spec=CompileSpec(compiler=compiler),
                            families=("basic",), max_cases=cases, progress=False, **kw)
    return Campaign(config).run()


@pytest.mark.slow
def test_a_segfaulting_worker_becomes_a_crash_finding_and_the_campaign_goes_on(tmp_path):
    summary = run(tmp_path, "segfault", 3, workers=1)
    n = judged(summary)
    assert summary["cases"] == 3 and summary["crashes"] == n
    assert summary["by_kind"] == {"crash": n}
    rows = summary["unique_findings"]  # one per program kind (cheap key) of one signature: a crash hides no other
    assert len({r["signature"] for r in rows}) == 1 and summary["unique"] == len({r["cheap_key"] for r in rows})
    saved = read_program(next((tmp_path / "out" / "findings").glob("*/examples/*.py")))
    assert saved.meta["oracle"] == "harness" and "def f(" in saved.case.source
    assert not list((tmp_path / "out" / "inflight").glob("*.py"))


@pytest.mark.slow
def test_a_hanging_case_times_out_into_a_finding(tmp_path):
    summary = run(tmp_path, "hang", 1, workers=1, case_timeout=3)
    judged(summary)
    assert summary["hangs"] == 1 and summary["by_kind"] == {"hang": 1}


def test_duplicates_are_counted_once_saved_and_summary_is_consistent(tmp_path):
    summary = run(tmp_path, "crash", 6, workers=0)
    rows, n = summary["unique_findings"], judged(summary, needed=2)
    assert summary["findings"] == n and sum(r["count"] for r in rows) == n
    assert summary["unique"] == len(rows) == len({(r["signature"], r["cheap_key"]) for r in rows}) <= n
    assert len(rows) < n or n < 6  # all six judged (torch 2.13): some are duplicates
    assert len(list((tmp_path / "out" / "findings").glob("*/examples/*.py"))) == len(rows)
    on_disk = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert on_disk["cases"] == 6 and on_disk["unique"] == len(rows)


def test_known_issues_never_hide_an_untriaged_finding(tmp_path):
    """Known issues match by identity key after triage only: a signature alone (shared by unrelated bugs) hides
    nothing, and neither does the cheap key an untriaged bucket is filed under, even when an entry lists it."""
    def campaign(out, known=None):
        config = CampaignConfig(budget=120, out=out, spec=CompileSpec(compiler="perturb-output"), seed=4,
                                families=("basic",), max_cases=12, progress=False, workers=0,
                                known=known or KnownIssues())
        return Campaign(config).run()

    first = campaign(tmp_path / "first")
    cheap = {b["key"] for b in first["buckets"] if b["status"] == "unminimized"}
    assert cheap, first["buckets"]
    sig = first["unique_findings"][0]["signature"]
    by_signature = KnownIssues({sig: {"signature": sig}}, [{"signature": sig, "key": "miscompile: other"}])
    assert campaign(tmp_path / "sig", by_signature)["unique"] == first["unique"]
    listed = KnownIssues(issues=[{"key": key, "upstream": "https://example.invalid/1"} for key in cheap])
    second = campaign(tmp_path / "again", listed)
    assert second["known"] == 0 and second["unique"] == first["unique"]


def test_one_symptom_of_two_causes_is_filed_twice_and_a_known_cause_hides_neither(tmp_path):
    """ "out[0] values differ" from a known bug and from another program kind: the second is a new finding, not one
    more count of the known issue (a campaign once counted a new torch bug into a known bucket this way); and
    without triage a cheap key never makes a finding known."""
    from dynfuzz.campaign.ledger import Ledger
    from dynfuzz.generators.case import draw_case
    from dynfuzz.oracles.model import finding
    from dynfuzz.triage.explain import cheap_explanation

    f = finding("outputs", "miscompile", "out[0] values differ", "out[0] values differ")
    first, second = draw_case(0), draw_case(1)
    key = cheap_explanation(first, f).key
    assert key != cheap_explanation(second, f).key
    known = KnownIssues({}, [{"signature": f.signature, "key": key, "upstream": "https://example.invalid/1"}])
    ledger = Ledger(CampaignConfig(budget=1, out=tmp_path, spec=CompileSpec(), known=known, progress=False))
    for case in (first, second, first, second, second):
        ledger.record(case, f)
    assert not ledger.known_hits
    assert sorted(u.count for u in ledger.unique.values()) == [2, 3]


def test_findings_are_replayed_first_from_the_example_database(tmp_path):
    db = tmp_path / "db"
    first = run(tmp_path / "a", "perturb-output", 4, workers=0, database=db)
    assert first["unique"] >= 1 and first["replayed_from_database"] == 0
    failing_cases = len({u["seed"] for u in first["unique_findings"]})  # one case may give several signatures
    second = run(tmp_path / "b", "perturb-output", failing_cases, workers=0, database=db, seed=12345)
    assert second["replayed_from_database"] == failing_cases
    assert {u["signature"] for u in second["unique_findings"]} == {u["signature"] for u in first["unique_findings"]}


def test_a_database_replay_takes_no_index_of_the_seed_stream(tmp_path):
    """Replays come first and count among `--cases`, but every index of the stream they leave is drawn: the
    run draws indices 0 and 1 (before, each replay consumed an index whose seed was never drawn)."""
    db = tmp_path / "db"
    first = run(tmp_path / "a", "perturb-output", 3, workers=0, database=db)
    replays = len({u["seed"] for u in first["unique_findings"]})
    assert replays >= 1
    second = run(tmp_path / "b", "perturb-output", replays + 2, workers=0, database=db, seed=12345)
    assert second["replayed_from_database"] == replays and second["cases"] == replays + 2
    assert second["resume"]["next_index"] == 2


def test_identity_compiler_reports_nothing_across_all_families(tmp_path):
    config = CampaignConfig(budget=120, out=tmp_path / "out", spec=CompileSpec(compiler="identity"),
                            max_cases=60, progress=False, workers=0)
    summary = Campaign(config).run()
    assert summary["cases"] == 60 and summary["findings"] == 0, summary["unique_findings"]


def test_campaign_writes_a_progress_chart(tmp_path):
    import xml.etree.ElementTree as ET

    run(tmp_path, "perturb-output", 5, workers=0)
    svg = ET.parse(tmp_path / "out" / "progress.svg").getroot()
    curves = {el.get("id"): el for el in svg.iter() if el.get("id") in ("cases", "unique")}
    assert set(curves) == {"cases", "unique"}
    for curve in curves.values():
        path = next(el for el in curve.iter() if el.tag.endswith("path"))
        assert path.get("d").count("L") >= 1  # a line through at least two samples


def test_in_a_log_the_bucket_table_is_one_plain_line_per_bucket(capsys):
    """Not a terminal (CI, a redirect): rich would fold each row into an 80-column block; plain lines instead."""
    from dynfuzz.campaign.progress import Reporter

    key = "outputs/wrong-value: a construct whose name is long enough to be folded at eighty columns @dynamo"
    repro = "/very/long/campaign/output/folder/findings/wrong-value-a-construct-whose-name-is-0123456789ab/repro.py"
    summary = {"torch": "2.13.0", "backend": "eager", "device": "cpu", "cases": 7, "bugs": 1,
               "buckets": [{"id": "0123456789ab", "key": key, "count": 3, "status": "ok", "repro": repro}]}
    Reporter(False, 10).final(summary)
    lines = capsys.readouterr().err.splitlines()
    assert any(key in line and repro in line and "0123456789ab" in line for line in lines), lines
    assert "  cases: 7" in lines and not any("│" in line or "┃" in line for line in lines)


def test_the_compile_cache_is_gone_after_the_run_triage_included(tmp_path, monkeypatch):
    """campaign_compile_cache points torch's caches at OUT/.torch-cache, inherited by the workers and the triage
    processes: removed only once the triage drain has stopped them (before, they recreated it)."""
    import os

    for var in ("TORCHINDUCTOR_CACHE_DIR", "TRITON_CACHE_DIR"):
        monkeypatch.delenv(var, raising=False)
    during_drain = []
    drain = Campaign.triage_drain

    def watched(self, grace=60.0):
        cache = os.environ.get("TORCHINDUCTOR_CACHE_DIR")
        during_drain.append(cache is not None and Path(cache).parent.is_dir())
        return drain(self, grace)

    monkeypatch.setattr(Campaign, "triage_drain", watched)
    config = CampaignConfig(budget=25, out=tmp_path / "out", spec=CompileSpec(compiler="perturb-output"),
                            families=("basic",), max_cases=2, progress=False, workers=0, minimize_budget=20)
    summary = Campaign(config).run()
    assert summary["buckets"] and during_drain == [True]
    assert not (tmp_path / "out" / ".torch-cache").exists() and "TORCHINDUCTOR_CACHE_DIR" not in os.environ
