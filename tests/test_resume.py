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
# (run/ledger.py), and a killed run's triage is cut short; filing at once makes both runs' rows comparable.
CAMPAIGN = ["fuzz", "--cases", "40", "--budget", "5m", "--seed", "4", "--family", "basic", "--workers", "0",
            "--compiler", "perturb-output", "--no-db", "--no-progress", "--no-minimize"]


def _dynfuzz(*args, timeout=300):
    return subprocess.run([sys.executable, "-m", "dynfuzz", *args], capture_output=True, text=True,
                          timeout=timeout, cwd=ROOT)


def _start(*args) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "dynfuzz", *args], cwd=ROOT, stdout=subprocess.DEVNULL,
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
    assert before["cases"] < 40
    r = _dynfuzz("fuzz", "--resume", str(killed), "--cases", "40", "--budget", "5m", "--no-progress", "--no-db")
    assert r.returncode == 0, r.stderr
    a = json.loads((whole / "summary.json").read_text())
    b = json.loads((killed / "summary.json").read_text())
    assert b["cases"] == a["cases"] == 40
    assert b["findings"] == a["findings"]
    found = [(u["signature"], u["cheap_key"]) for u in b["unique_findings"]]
    assert len(found) == len(set(found))
    assert set(found) == {(u["signature"], u["cheap_key"]) for u in a["unique_findings"]}
    assert b["features"] == a["features"]
    assert b["resumed"]["previous_cases"] == before["cases"]
    assert b["seed"] == 4 and b["compiler"] == "perturb-output"  # settings came from the directory


def test_resume_rejects_a_conflicting_flag_and_a_corrupt_directory(tmp_path):
    from dynfuzz.cli import main

    out = tmp_path / "run"
    out.mkdir()
    (out / "summary.json").write_text(json.dumps({"seed": 4, "families": ["basic"], "backend": "eager",
                                                  "resume": {"next_index": 3, "open_indices": [1]},
                                                  "unique_findings": []}))
    assert main(["fuzz", "--resume", str(out), "--seed", "5"]) == 2
    assert main(["fuzz", "--resume", str(out), "--backend", "aot_eager"]) == 2
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
    start = time.monotonic()
    proc.send_signal(signal.SIGTERM)
    code = proc.wait(60)
    assert code == 128 + signal.SIGTERM, proc.stderr.read()
    assert time.monotonic() - start < 45
    summary = json.loads((out / "summary.json").read_text())
    assert summary["stopped_by"] == "SIGTERM" and summary["cases"] >= 2
    assert (out / "progress.svg").exists()
    children = [p for p in os.listdir("/proc") if p.isdigit()]
    assert str(proc.pid) not in children
