"""The campaign journal (campaign/journal.py): every fact appended before it is acted on, everything else a view made
again from it; the commands that continue a campaign (resume, triage, releases check, merge, report) append to
it or read it and never change another folder. A fake triage queue (tests/test_filing.py) answers jobs."""
from __future__ import annotations

import fcntl
import json
import os
from pathlib import Path

import pytest
from dynfuzz.campaign.campaign import Campaign, CampaignConfig
from dynfuzz.campaign.journal import JOURNAL, Journal, read_journal
from dynfuzz.campaign.journal_views import rebuild
from dynfuzz.campaign.out_folder import LOCK
from dynfuzz.cli import main
from dynfuzz.generators.case import draw_case
from dynfuzz.run.compilers import CompileSpec
from test_filing import SYMPTOM, FakeQueue, ident_of, key_of, triaged_as

SMALL = ["--family", "basic", "--workers", "0", "--compiler", "perturb-output", "--no-db", "--no-progress"]


def _tree(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def _queued_campaign(out: Path, cases, **config) -> Campaign:
    """A campaign whose triage never answered: its findings filed under cheap keys, their jobs in queue/."""
    campaign = Campaign(CampaignConfig(budget=1, out=out, spec=config.pop("spec", CompileSpec()), progress=False,
                                       **config))
    campaign.ledger.triage = campaign.triage = FakeQueue()
    for case in cases:
        campaign.ledger.record(case, SYMPTOM)
    campaign.triage_drain(0.0)
    campaign.journal.append("stop", stopped_by=None, unfinished=0)
    campaign.write_summary(final=True)
    return campaign


def _answering(cases, construct="one cause", seen=None):
    class AnsweringPool(FakeQueue):
        def __init__(self, spec, *args, **kwargs):
            if seen is not None:
                seen.append(spec)
            super().__init__({ident_of(c, SYMPTOM): triaged_as(construct) for c in cases})
    return AnsweringPool


def test_the_journal_skips_a_line_a_kill_tore_and_appends_after_it(tmp_path):
    journal = Journal(tmp_path)
    journal.append("settings", settings={"seed": 1})
    journal.close()
    with open(tmp_path / JOURNAL, "a") as f:
        f.write('{"fact": "finding", "ident": "x"')  # killed in the middle of a line
    assert [r["fact"] for r in read_journal(tmp_path)] == ["settings"]
    Journal(tmp_path).append("stop", stopped_by=None)
    assert [r["fact"] for r in read_journal(tmp_path)] == ["settings", "stop"]


def test_summary_and_findings_are_rebuilt_from_the_journal_alone(tmp_path):
    """Deleting summary.json, findings/ and queue/ loses nothing: `dynfuzz report DIR` makes them again."""
    out = tmp_path / "out"
    assert main(["fuzz", "--cases", "6", "--seed", "3", "--no-minimize", *SMALL, "--out", str(out)]) == 0
    before, files = json.loads((out / "summary.json").read_text()), _tree(out / "findings")
    assert before["unique"] >= 1 and files
    for name in ("summary.json", "findings"):
        (out / name).unlink() if (out / name).is_file() else __import__("shutil").rmtree(out / name)
    assert main(["report", str(out)]) == 0
    after = json.loads((out / "summary.json").read_text())
    for field in ("cases", "findings", "unique", "bugs", "buckets", "unique_findings", "features", "by_oracle",
                  "seed", "workers", "budget_seconds", "known_signatures", "queued", "stopped_by"):
        assert after[field] == before[field], field
    assert _tree(out / "findings") == files


def test_a_triage_result_journaled_before_its_job_leaves_the_queue_survives_a_kill(tmp_path, monkeypatch):
    """The kill window between a job leaving queue/ and its result reaching summary.json lost a suspect."""
    from dynfuzz.triage.pending import PendingJobs

    out = tmp_path / "out"
    cases = [draw_case(0), draw_case(1)]
    campaign = Campaign(CampaignConfig(budget=1, out=out, spec=CompileSpec(), progress=False))
    campaign.ledger.triage = _answering(cases)(CompileSpec())
    for case in cases:
        campaign.ledger.record(case, SYMPTOM)
    campaign.write_summary(final=True)
    real_done = PendingJobs.done

    class Killed(BaseException):
        pass

    def done_then_killed(self, ident):
        real_done(self, ident)
        raise Killed

    monkeypatch.setattr(PendingJobs, "done", done_then_killed)
    with pytest.raises(Killed):
        for ident, status, payload in campaign.ledger.triage.poll():
            campaign.ledger.apply_triage(ident, status, payload)
    monkeypatch.setattr(PendingJobs, "done", real_done)
    summary = rebuild(out, report=False)
    journaled = {r["ident"] for r in read_journal(out) if r["fact"] == "finding"}
    filed = {f"{u['signature']} {u['cheap_key']}" for u in summary["unique_findings"]}
    waiting = {job.ident for job in PendingJobs(out / "queue").load()}
    assert len(journaled) == 2 and journaled <= filed | waiting
    assert key_of("one cause") in {b["key"] for b in summary["buckets"]}


def test_triage_run_from_another_directory_changes_no_other_campaign(tmp_path, monkeypatch):
    """Two campaigns with the same relative --out in two directories: `dynfuzz triage ../a/out` run from b once
    renamed and deleted b's bucket folders (summary paths were relative to the command's directory)."""
    from dynfuzz.campaign.finish import finish_triage

    cases = [draw_case(0), draw_case(1)]
    for name in ("a", "b"):
        (tmp_path / name).mkdir()
        monkeypatch.chdir(tmp_path / name)
        _queued_campaign(Path("out"), cases)
        summary = json.loads(Path("out/summary.json").read_text())
        assert all((Path("out") / b["folder"]).is_dir() for b in summary["buckets"]), "paths relative to OUT"
    before = _tree(tmp_path / "b" / "out")
    summary = finish_triage(Path("../a/out"), budget=30, workers=1, minimize_budget=10, lanes_cls=_answering(cases))
    assert [b["key"] for b in summary["buckets"]] == [key_of("one cause")]
    assert _tree(tmp_path / "b" / "out") == before
    assert (tmp_path / "a" / "out" / summary["buckets"][0]["folder"]).is_dir()


def test_dynfuzz_triage_never_rewrites_the_campaign_settings(tmp_path):
    """`dynfuzz triage --workers 3 --budget 30s` once wrote its own workers, budget and (dropped) backends into
    summary.json, and triaged an aot_eager finding on eager."""
    from dynfuzz.campaign.finish import finish_triage

    out, cases, specs = tmp_path / "out", [draw_case(0), draw_case(1)], []
    spec = CompileSpec(backend="eager", backends=("eager", "aot_eager"))
    _queued_campaign(out, cases, spec=spec, workers=2, max_cases=50)
    before = json.loads((out / "summary.json").read_text())
    summary = finish_triage(out, budget=30, workers=3, minimize_budget=10, lanes_cls=_answering(cases, seen=specs))
    assert specs == [spec], "triaged under the campaign's own compile spec"
    for field in ("workers", "budget_seconds", "backends", "reference", "torch_patches", "max_cases", "seed"):
        assert summary[field] == before[field], field
    assert json.loads((out / "summary.json").read_text())["workers"] == 2


def test_overwrite_empties_only_a_campaign_folder(tmp_path, capsys):
    """`fuzz --out . --overwrite` in a checkout deleted .git: anything but a campaign folder is refused."""
    checkout = tmp_path / "checkout"
    (checkout / ".git").mkdir(parents=True)
    (checkout / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    (checkout / "notes.txt").write_text("mine\n")
    args = ["fuzz", "--cases", "1", "--no-minimize", *SMALL, "--overwrite", "--out"]
    assert main([*args, str(checkout)]) == 2
    assert "not a dynfuzz campaign folder" in capsys.readouterr().err
    assert (checkout / ".git" / "HEAD").is_file() and (checkout / "notes.txt").is_file()
    campaign = tmp_path / "campaign"
    assert main(["fuzz", "--cases", "1", "--no-minimize", *SMALL, "--out", str(campaign)]) == 0
    (campaign / "stale.txt").write_text("from the earlier run\n")
    assert main([*args, str(campaign)]) == 0
    assert not (campaign / "stale.txt").exists() and (campaign / JOURNAL).is_file()


def test_merge_refuses_an_existing_campaign_as_its_out(tmp_path, capsys):
    a, b = tmp_path / "a", tmp_path / "b"
    for out in (a, b):
        assert main(["fuzz", "--cases", "2", "--no-minimize", *SMALL, "--out", str(out)]) == 0
    kept = (b / "summary.json").read_text()
    assert main(["merge", str(a), str(b), "--out", str(b)]) == 2
    assert "holds a campaign" in capsys.readouterr().err
    assert (b / "summary.json").read_text() == kept


def test_releases_check_writes_back_only_under_the_folders_lock(tmp_path):
    from dynfuzz.errors import UsageError
    from dynfuzz.releases.campaign_folder import write_back

    out = tmp_path / "out"
    _queued_campaign(out, [draw_case(0)])
    kept = (out / "summary.json").read_text()
    with open(out / LOCK, "a+") as held:
        fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)
        with pytest.raises(UsageError, match="in use"):
            write_back(out, [], {"2.13.0": "cpu"})
    assert (out / "summary.json").read_text() == kept
    summary = write_back(out, [], {"2.13.0": "cpu"})
    assert summary["releases"]["tried"] == ["2.13.0"]
    assert [r["fact"] for r in read_journal(out)][-1] == "release"


def test_resume_takes_over_every_flag_and_keeps_the_total_budget(tmp_path):
    """--case-timeout, --worker-memory, --pristine-torch and --db were not restored, and `budget_seconds` was
    rewritten with what was left (a second resume then got less than the campaign had)."""
    from dynfuzz.cli import build_parser
    from dynfuzz.cli.campaign_commands import _resume

    out, db = tmp_path / "out", tmp_path / "db"
    assert main(["fuzz", "--cases", "2", "--budget", "60s", "--case-timeout", "77s", "--worker-memory", "off",
                 "--pristine-torch", "--db", str(db), "--no-minimize", "--family", "basic", "--workers", "0",
                 "--compiler", "perturb-output", "--no-progress", "--out", str(out)]) == 0
    args = build_parser().parse_args(["fuzz", "--resume", str(out), "--cases", "3"])
    state = _resume(args)
    assert (args.case_timeout, args.worker_memory, args.pristine_torch, args.db) == ("77s", "off", True, str(db))
    assert args.compiler == "perturb-output" and args.cases == 3
    first = json.loads((out / "summary.json").read_text())
    assert state.remaining_budget == pytest.approx(60 - first["seconds"], abs=0.01)
    assert main(["fuzz", "--resume", str(out), "--cases", "3", "--no-progress"]) == 0
    summary = json.loads((out / "summary.json").read_text())
    assert summary["budget_seconds"] == pytest.approx(60, abs=0.01) and summary["cases"] == 3
    assert summary["max_cases"] == 3


def test_a_missing_known_file_is_a_usage_error(tmp_path, capsys):
    missing = str(tmp_path / "missing.toml")
    assert main(["fuzz", "--cases", "1", "--no-minimize", *SMALL, "--known", missing,
                 "--out", str(tmp_path / "out")]) == 2
    assert main(["known", "--check", "--known", missing]) == 2
    err = capsys.readouterr().err
    assert err.count("no such file") == 2


def test_triage_refuses_a_stray_mutant_variable(tmp_path, monkeypatch, capsys):
    out = tmp_path / "out"
    _queued_campaign(out, [draw_case(0)])
    kept = (out / JOURNAL).read_text()
    monkeypatch.setenv("DYNFUZZ_MUTANTS", "cell-by-name")
    assert main(["triage", str(out)]) == 2
    assert "DYNFUZZ_MUTANTS" in capsys.readouterr().err
    assert (out / JOURNAL).read_text() == kept
    assert os.environ["DYNFUZZ_MUTANTS"] == "cell-by-name"


def test_a_triage_result_that_fails_to_apply_does_not_end_the_campaign(tmp_path, monkeypatch):
    """An OSError from a bucket folder moved away ended the campaign with exit 3 and no final summary."""
    cases = [draw_case(0)]
    campaign = Campaign(CampaignConfig(budget=1, out=tmp_path / "out", spec=CompileSpec(), progress=False))
    campaign.ledger.triage = campaign.triage = _answering(cases)(CompileSpec())
    campaign.ledger.record(cases[0], SYMPTOM)

    def moved(*args, **kwargs):
        raise FileNotFoundError("findings/x: the folder was moved away")

    monkeypatch.setattr(campaign.ledger.filer, "place", moved)
    campaign.triage_poll()
    assert campaign.ledger.harness_errors.counts["internal"] == 1
    assert [r["fact"] for r in read_journal(tmp_path / "out")].count("triage") == 1, "the result is journaled"


def test_a_resumed_campaign_counts_its_database_replays_against_cases(tmp_path):
    """`--cases 8` with 3 database replays ended at 11 after a resume: the replays were not restored."""
    db = tmp_path / "db"
    args = ["--family", "basic", "--workers", "0", "--compiler", "perturb-output", "--no-progress", "--no-minimize",
            "--db", str(db)]
    assert main(["fuzz", "--cases", "3", *args, "--out", str(tmp_path / "first")]) == 0
    out = tmp_path / "second"
    assert main(["fuzz", "--cases", "8", "--seed", "1", *args, "--out", str(out)]) == 0
    before = json.loads((out / "summary.json").read_text())
    assert before["replayed_from_database"] >= 1 and before["cases"] == 8
    assert main(["fuzz", "--resume", str(out), "--no-progress"]) == 0
    after = json.loads((out / "summary.json").read_text())
    assert after["cases"] == 8 and after["replayed_from_database"] == before["replayed_from_database"]


def test_the_triage_drain_keeps_fuzz_within_its_budget_plus_the_end_limit(tmp_path):
    """A 20-minute campaign was still draining triage 5 minutes after its budget: the drain gets what is left of
    END_LIMIT after the budget, and nothing after a SIGTERM (its jobs stay queued)."""
    import time

    from dynfuzz.campaign.campaign import END_LIMIT, END_RESERVE

    campaign = Campaign(CampaignConfig(budget=1200, out=tmp_path / "out", spec=CompileSpec(), progress=False))
    now = time.monotonic()
    assert campaign._drain_grace(start=now) == pytest.approx(60.0, abs=0.5), "10% of 20 minutes, at most 60 s"
    late = campaign._drain_grace(start=now - 1200 - (END_LIMIT - END_RESERVE - 5))  # cases ended 40 s late
    assert 0 < late <= 5.0
    assert campaign._drain_grace(start=now - 1200 - END_LIMIT - 30) == 0.0
    campaign.stopped_by = "SIGTERM"
    assert campaign._drain_grace(start=now) == 0.0


@pytest.mark.slow
def test_sigterm_while_triage_drains_ends_with_the_final_views(tmp_path):
    """SIGTERM during the drain once killed the campaign at once: no final summary, `stopped_by` null."""
    import signal
    import subprocess
    import sys
    import time

    out = tmp_path / "out"
    proc = subprocess.Popen([sys.executable, "-m", "dynfuzz", "fuzz", "--budget", "15s", "--seed", "3", *SMALL[:2],
                             "--workers", "1", "--compiler", "perturb-output", "--no-db", "--no-progress",
                             "--minimize-budget", "60s", "--out", str(out)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    until = time.monotonic() + 300
    while not ((out / JOURNAL).is_file() and '"fact":"drain"' in (out / JOURNAL).read_text()):
        assert proc.poll() is None, proc.stderr.read()
        assert time.monotonic() < until
        time.sleep(0.1)
    proc.send_signal(signal.SIGTERM)
    sent = time.monotonic()
    assert proc.wait(120) == 128 + signal.SIGTERM, proc.stderr.read()
    assert time.monotonic() - sent < 30
    summary = json.loads((out / "summary.json").read_text())
    assert summary["stopped_by"] == "SIGTERM"
    assert read_journal(out)[-1]["fact"] == "progress" and any(r["fact"] == "stop" for r in read_journal(out))
    journaled = {r["ident"] for r in read_journal(out) if r["fact"] == "finding"}
    listed = {f"{u['signature']} {u['cheap_key']}" for u in summary["unique_findings"]}
    assert journaled and journaled <= listed, "every finding is in a bucket or waiting in the queue"


def test_a_release_check_of_a_bucket_still_waiting_for_triage_stays_in_its_views(tmp_path, monkeypatch, capsys):
    """The releases of an `unminimized` bucket (one its suspect makes only when the views settle it) survive the
    rebuild: they were applied before settling and lost. `report --issue` fills its line in from them, and
    with no release environment installed it runs nothing and says "not checked"."""
    from dynfuzz.releases.campaign_folder import write_back
    from dynfuzz.releases.matrix import Cell, Row
    from dynfuzz.releases.repros import Repro
    out, case, other = tmp_path / "out", draw_case(0), draw_case(1)
    campaign = Campaign(CampaignConfig(budget=1, out=out, spec=CompileSpec(), progress=False, minimize_budget=5.0))
    campaign.ledger.triage = campaign.triage = FakeQueue({ident_of(case, SYMPTOM): triaged_as("one cause")})
    campaign.ledger.record(case, SYMPTOM)
    campaign.ledger.record(other, SYMPTOM)  # the same signature, another cheap key: a suspect
    campaign.triage_drain(0.0)  # the first is explained elsewhere; the second, never triaged, is settled
    campaign.journal.append("stop", stopped_by=None, unfinished=0)
    campaign.write_summary(final=True)
    rows = json.loads((out / "summary.json").read_text())["buckets"]
    row = next(r for r in rows if r["status"] == "unminimized")
    assert not row.get("releases") and len(rows) == 2
    monkeypatch.setenv("DYNFUZZ_CACHE_DIR", str(tmp_path / "empty-cache"))
    assert main(["report", str(out), "--bucket", row["id"], "--issue"]) == 0
    assert "**Fails on releases:** not checked" in capsys.readouterr().out
    write_back(out, [Row(Repro(out / row["repro"], "b", {}, out, row), {"2.13.0": Cell("reproduces", "k")})],
               {"2.13.0": "2.13.0+cpu"})
    rebuild(out, report=False)
    again = next(r for r in json.loads((out / "summary.json").read_text())["buckets"] if r["id"] == row["id"])
    assert again["releases"] == {"2.13.0": {"outcome": "reproduces", "key": "k"}}
    assert main(["report", str(out), "--bucket", row["id"], "--issue"]) == 0
    assert "**Fails on releases:** 2.13.0" in capsys.readouterr().out


def test_progress_is_journaled_by_the_second_not_after_every_case(tmp_path):
    """Note [Progress is journaled by the second]: 80 fast cases write a handful of `progress` facts (one a case
    fsynced 11 KB and rewrote summary.json each time, and cost a fast campaign a fifth of its cases), the last of
    them holds every case, and every finding is still journaled as it was found."""
    import time

    out = tmp_path / "out"
    start = time.monotonic()
    assert main(["fuzz", "--cases", "80", "--budget", "5m", "--seed", "3", *SMALL, "--no-minimize",
                 "--out", str(out)]) == 0
    seconds = time.monotonic() - start
    facts = read_journal(out)
    progress = [r for r in facts if r["fact"] == "progress"]
    assert progress[-1]["counts"]["cases"] == 80
    assert len(progress) <= seconds / 1.0 + 4 < 80
    summary = json.loads((out / "summary.json").read_text())
    assert summary["findings"] == sum(1 for r in facts if r["fact"] == "finding") > 0
