"""`dynfuzz fuzz --resume DIR` after the parent was SIGKILLed, and SIGTERM ending a campaign cleanly."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
# No minimization: which findings of a signature get their own row depends on when their side triage returns
# (campaign/ledger.py), and a killed run's triage is cut short; filing at once makes both runs' rows comparable.
# 200 cases: the progress (and summary.json) is rewritten at most once a second, so the kill after the first
# few cases must land in a run that lasts several seconds (Note [Progress is journaled by the second]).
CASES = 1000  # seconds of work: the first summary, written after a second, must find the run unfinished
CAMPAIGN = ["fuzz", "--cases", str(CASES), "--budget", "5m", "--seed", "4", "--family", "basic", "--workers", "0",
            "--compiler", "perturb-output", "--no-db", "--no-progress", "--no-minimize"]


def _dynfuzz(*args, timeout=300):
    return subprocess.run([sys.executable, "-m", "dynfuzz", *args], capture_output=True, text=True,
                          timeout=timeout, cwd=os.getcwd())


def _start(*args) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "dynfuzz", *args], cwd=os.getcwd(), stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)


def _cases(out: Path) -> int:
    try:
        return json.loads((out / "summary.json").read_text())["cases"]
    except (OSError, ValueError, KeyError):
        return 0


def _wait_for(proc: subprocess.Popen, out: Path, cases: int, limit: float = 240) -> None:
    until = time.monotonic() + limit
    while _cases(out) < cases:
        assert proc.poll() is None, proc.stderr.read()
        assert time.monotonic() < until, "the campaign made no progress"
        time.sleep(0.2)


@pytest.mark.slow
def test_resume_after_sigkill_completes_the_stream_without_duplicates(tmp_path):
    whole, killed = tmp_path / "whole", tmp_path / "killed"
    assert _dynfuzz(*CAMPAIGN, "--out", str(whole)).returncode == 0
    proc = _start(*CAMPAIGN, "--out", str(killed))
    _wait_for(proc, killed, 3)
    proc.send_signal(signal.SIGKILL)
    proc.wait(30)
    before = json.loads((killed / "summary.json").read_text())
    assert before["cases"] < CASES
    journaled = [json.loads(line) for line in (killed / "journal.jsonl").read_text().splitlines(keepends=True)
                 if line.endswith("\n")]
    progress = [r for r in journaled if r["fact"] == "progress"][-1]["counts"]  # the journal is the campaign
    r = _dynfuzz("fuzz", "--resume", str(killed), "--cases", str(CASES), "--budget", "5m", "--no-progress", "--no-db")
    assert r.returncode == 0, r.stderr
    a = json.loads((whole / "summary.json").read_text())
    b = json.loads((killed / "summary.json").read_text())
    assert b["cases"] == a["cases"] == CASES
    assert b["findings"] == a["findings"]
    found = [(u["signature"], u["cheap_key"]) for u in b["unique_findings"]]
    assert len(found) == len(set(found))
    assert set(found) == {(u["signature"], u["cheap_key"]) for u in a["unique_findings"]}
    assert b["features"] == a["features"]
    assert b["resumed"]["previous_cases"] == progress["cases"] >= before["cases"]
    assert b["seed"] == 4 and b["compiler"] == "perturb-output"  # settings came from the directory
    assert b["bugs"] == a["bugs"] and sorted(x["key"] for x in b["buckets"]) == sorted(x["key"] for x in a["buckets"])
    assert b["skipped"] == a["skipped"]
    assert b["seconds"] >= before["seconds"], "seconds count every run of the campaign together"
    assert b["cases_per_second"] == pytest.approx(b["cases"] / b["seconds"], rel=1e-3)  # both rounded to 3 places


@pytest.mark.slow
def test_a_resumed_cases_campaign_with_workers_ends_with_all_its_cases(tmp_path):
    """--cases 60 --workers 2, SIGKILLed early, resumed without --budget: the resumed run has what the original
    budget left, and ends at 60 cases (it once stopped at whatever the default 60 s allowed)."""
    out = tmp_path / "killed"
    args = ["fuzz", "--cases", "60", "--budget", "10m", "--seed", "4", "--family", "basic", "--workers", "2",
            "--compiler", "perturb-output", "--no-db", "--no-progress", "--no-minimize", "--out", str(out)]
    proc = _start(*args)
    _wait_for(proc, out, 4)
    proc.send_signal(signal.SIGKILL)
    proc.wait(30)
    r = _dynfuzz("fuzz", "--resume", str(out), "--no-progress", "--no-db")
    assert r.returncode == 0, r.stderr
    summary = json.loads((out / "summary.json").read_text())
    assert summary["cases"] == 60 and summary["max_cases"] == 60


def test_resume_rejects_a_conflicting_flag_and_a_corrupt_directory(tmp_path, monkeypatch):
    import hypothesis
    from dynfuzz.cli import main

    out = tmp_path / "run"
    out.mkdir()
    saved = {"seed": 4, "families": ["basic"], "backend": "eager", "backends": [], "shard": [1, 1],
             "reference": {"enabled": False, "guards": False}, "mutants": [], "cross_device": False,
             "hypothesis": hypothesis.__version__, "disabled_constructs": [],
             "resume": {"next_index": 3, "open_indices": [1]}, "unique_findings": []}
    (out / "summary.json").write_text(json.dumps(saved))
    assert main(["fuzz", "--resume", str(out), "--seed", "5"]) == 2
    assert main(["fuzz", "--resume", str(out), "--backend", "aot_eager"]) == 2
    for flag in (["--guards"], ["--reference"], ["--backends", "eager,aot_eager"], ["--shard", "1/2"],
                 ["--mutant", "cell-by-name"], ["--overwrite"]):
        assert main(["fuzz", "--resume", str(out), *flag]) == 2, flag
    monkeypatch.setenv("DYNFUZZ_DISABLE_CONSTRUCTS", "layout")
    assert main(["fuzz", "--resume", str(out)]) == 2, "a switched-off construct draws other programs"
    monkeypatch.delenv("DYNFUZZ_DISABLE_CONSTRUCTS")
    (out / "summary.json").write_text(json.dumps({**saved, "hypothesis": "6.0.0"}))
    assert main(["fuzz", "--resume", str(out)]) == 2, "another Hypothesis draws other programs from a seed"
    (out / "summary.json").write_text(json.dumps({**saved, "torch": "2.5.1"}))
    assert main(["fuzz", "--resume", str(out)]) == 2, "another torch judges a case otherwise"
    (out / "summary.json").write_text("{not json")
    assert main(["fuzz", "--resume", str(out)]) == 2
    (out / "summary.json").write_text(json.dumps({"seed": 1}))
    assert main(["fuzz", "--resume", str(out)]) == 2
    assert main(["fuzz", "--resume", str(tmp_path / "absent")]) == 2


@pytest.mark.slow
def test_sigterm_ends_a_campaign_cleanly_with_its_summary(tmp_path):
    out = tmp_path / "out"
    proc = _start("fuzz", "--budget", "10m", "--seed", "2", "--family", "basic", "--workers", "1", "--no-db",
                  "--no-progress", "--out", str(out))
    _wait_for(proc, out, 2)
    workers = _children(proc.pid)
    assert workers, "a campaign with --workers 1 runs its cases in a child process"
    start = time.monotonic()
    proc.send_signal(signal.SIGTERM)
    code = proc.wait(60)
    assert code == 128 + signal.SIGTERM, proc.stderr.read()
    assert time.monotonic() - start < 45
    summary = json.loads((out / "summary.json").read_text())
    assert summary["stopped_by"] == "SIGTERM" and summary["cases"] >= 2
    assert (out / "progress.svg").exists()
    time.sleep(1.0)
    assert not [pid for pid, started in workers.items() if _alive(pid, started)], "no worker outlives the campaign"


def _stat(pid: int) -> list[str] | None:
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return text[text.rindex(")") + 2:].split()  # fields after the command name: state, ppid, ...


def _children(parent: int) -> dict[int, str]:
    """The live child processes of `parent`: pid -> its start time (so a reused pid is not taken for it)."""
    found = {}
    for name in os.listdir("/proc"):
        fields = _stat(int(name)) if name.isdigit() else None
        if fields and int(fields[1]) == parent:
            found[int(name)] = fields[19]
    return found


def _alive(pid: int, started: str) -> bool:
    fields = _stat(pid)
    return fields is not None and fields[19] == started and fields[0] != "Z"


def test_a_campaign_never_changes_a_folder_it_did_not_create(tmp_path, capsys):
    """`--out` holding an earlier campaign is refused (one line naming --resume and --overwrite); --overwrite
    empties it first; a second campaign cannot run in a folder a running one holds."""
    import fcntl

    from dynfuzz.campaign.out_folder import LOCK
    from dynfuzz.cli import main

    out = tmp_path / "out"
    (out / "findings" / "kept-bucket").mkdir(parents=True)
    (out / "findings" / "kept-bucket" / "repro.py").write_text("# someone's earlier finding\n")
    (out / "summary.json").write_text("{}\n")  # an earlier layout's campaign: --overwrite may empty it
    args = ["fuzz", "--cases", "1", "--family", "basic", "--workers", "0", "--no-db", "--no-progress",
            "--no-minimize", "--out", str(out)]
    assert main(args) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "--resume" in err and "--overwrite" in err
    assert (out / "findings" / "kept-bucket" / "repro.py").exists()
    with open(out / LOCK, "a+") as held:
        fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)
        assert main([*args, "--overwrite"]) == 2 and "in use" in capsys.readouterr().err
    assert main([*args, "--overwrite"]) == 0
    assert not (out / "findings" / "kept-bucket").exists() and (out / "summary.json").is_file()
