"""A kill sweep: SIGKILL a campaign with findings at many random moments (while it fuzzes, triages, resumes, or
replays its journal), continue it with `fuzz --resume` or `dynfuzz triage`, and check after every kill that the
folder's views made from its journal hold every finding ever journaled (in a bucket, or waiting in the queue),
that the counts agree with the journal, and that no other folder changed. The `perturb-output` double finds
something in most cases on eager, so findings and triage results arrive within seconds.

It kills until `DYNFUZZ_SWEEP_KILLS` runs (default 30) were killed, the first included, with
`DYNFUZZ_SWEEP_SECONDS` (default 2400) as a backstop that fails the test if it comes first; then a resumed run
and a `dynfuzz triage` run go to their end, checked the same way."""
from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
CASES = 24
START = ["fuzz", "--cases", str(CASES), "--budget", "5m", "--seed", "7", "--family", "basic", "--workers", "0",
         "--compiler", "perturb-output", "--backend", "eager", "--minimize-budget", "5s", "--no-db", "--no-progress"]


def _run(args: list[str], kill_after: float | None, journal: Path | None = None) -> str:
    """Run dynfuzz; SIGKILL it after `kill_after` s (None: let it end; with `journal`, counted from the moment
    that journal holds a finding). Returns how it ended."""
    proc = subprocess.Popen([sys.executable, "-m", "dynfuzz", *args], cwd=ROOT, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)
    try:
        if journal is not None:
            until = time.monotonic() + 300
            while not (journal.is_file() and '"fact":"finding"' in journal.read_text()):
                assert proc.poll() is None and time.monotonic() < until, "the campaign found nothing"
                time.sleep(0.2)
        proc.wait(kill_after if kill_after is not None else 400)
    except subprocess.TimeoutExpired:
        if kill_after is None:
            raise
        children = _children(proc.pid)
        proc.send_signal(signal.SIGKILL)
        proc.wait(30)
        _wait_gone(children)
        return "killed"
    err = proc.stderr.read()
    assert proc.returncode == 0, err
    return "ended"


def _stat(pid: int) -> list[str] | None:
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return text[text.rindex(")") + 2:].split()


def _children(parent: int) -> dict[int, str]:
    """pid -> start time of `parent`'s live children (its case workers and triage processes)."""
    found = {}
    for name in os.listdir("/proc"):
        fields = _stat(int(name)) if name.isdigit() else None
        if fields and int(fields[1]) == parent:
            found[int(name)] = fields[19]
    return found


def _wait_gone(children: dict[int, str]) -> None:
    """A killed campaign's children notice their parent is gone and end; the few that have not after 20 s are
    killed (they were started by this test's campaign)."""
    def alive():
        return [pid for pid, t in children.items() if (f := _stat(pid)) and f[19] == t and f[0] != "Z"]

    until = time.monotonic() + 20
    while alive() and time.monotonic() < until:
        time.sleep(0.2)
    for pid in alive():
        os.kill(pid, signal.SIGKILL)


def _tree(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def _check(out: Path) -> dict[str, int]:
    """The invariants of a journaled folder after a kill; returns what the journal held."""
    from dynfuzz.campaign.journal import has_journal, read_journal
    from dynfuzz.campaign.journal_views import rebuild
    from dynfuzz.triage.pending import PendingJobs

    if not has_journal(out):
        return {"findings": 0, "identities": 0, "triage": 0}
    facts = read_journal(out)
    summary = rebuild(out, report=False)
    findings = [r for r in facts if r["fact"] == "finding"]
    identities = {r["ident"] for r in findings}
    known = {r["key"] for r in facts if r["fact"] == "known" and r["known"]}
    rows = {f"{u['signature']} {u['cheap_key']}": u for u in summary["unique_findings"]}
    queued = {job.ident for job in PendingJobs(out / "queue").load()}
    for ident in identities:
        row = rows.get(ident)
        assert row is not None or ident.split(" ", 1)[1] in known or summary["known"], f"lost {ident}"
        if row is not None and row["bucket"] is not None:
            bucket = next(b for b in summary["buckets"] if b["key"] == row["bucket"])
            assert (out / bucket["folder"]).is_dir(), bucket["folder"]
        elif row is not None:
            assert ident in queued, f"{ident} is in no bucket and not in the queue"
    assert summary["findings"] == len(findings), "counts agree with the journal"
    assert sum(b["count"] for b in summary["buckets"]) + sum(r["count"] for r in rows.values() if r["waiting"]) \
        + summary["known"] == len(findings)
    by_oracle = Counter(r["oracle"] for r in findings)
    assert summary["by_oracle"] == dict(by_oracle)
    return {"findings": len(findings), "identities": len(identities),
            "triage": sum(1 for r in facts if r["fact"] == "triage")}


@pytest.mark.slow
@pytest.mark.trials  # minutes of campaigns killed and resumed: the long job beside the mutant trials
def test_kill_sweep_loses_no_finding(tmp_path, capsys):
    rng = random.Random(int(os.environ.get("DYNFUZZ_SWEEP_SEED", "1")))
    limit = float(os.environ.get("DYNFUZZ_SWEEP_SECONDS", "2400"))
    wanted = int(os.environ.get("DYNFUZZ_SWEEP_KILLS", "30"))
    out, neighbour = tmp_path / "campaign", tmp_path / "neighbour"
    (neighbour / "findings" / "kept").mkdir(parents=True)
    (neighbour / "findings" / "kept" / "repro.py").write_text("# another campaign's bucket\n")
    (neighbour / "summary.json").write_text('{"buckets": [{"folder": "findings/kept"}]}\n')
    before = _tree(neighbour)
    from dynfuzz.campaign.journal import JOURNAL, has_journal

    t = time.monotonic()
    _run([*START, "--out", str(out)], kill_after=rng.uniform(0.0, 3.0), journal=out / JOURNAL)
    startup = time.monotonic() - t  # to the first finding on this machine, as loaded as it is now
    kills, ends, runs, seen = 1, 0, Counter({"start killed": 1}), _check(out)
    until = time.monotonic() + limit
    while kills < wanted:
        assert time.monotonic() < until, f"{kills} kill points in {limit:.0f} s, {wanted} wanted"
        if rng.random() < 0.3:
            args, kind = ["triage", str(out), "--budget", "20s", "--minimize-budget", "5s"], "triage"
        else:
            args, kind = ["fuzz", "--resume", str(out), "--no-progress", "--no-db"], "resume"
        ended = _run(args, kill_after=rng.uniform(0.3, startup + 8.0))
        if os.environ.get("DYNFUZZ_SWEEP_VERBOSE"):
            with capsys.disabled():
                print(kind, ended, sorted(p.name for p in out.iterdir()) if out.exists() else None)
        runs[f"{kind} {ended}"] += 1
        kills += ended == "killed"
        ends += ended == "ended"
        seen = _check(out)
        assert _tree(neighbour) == before, "another folder changed"
    _run(["fuzz", "--resume", str(out), "--no-progress", "--no-db"], kill_after=None)
    _check(out)
    _run(["triage", str(out), "--budget", "120s", "--minimize-budget", "10s"], kill_after=None)
    final = _check(out)
    summary = json.loads((out / "summary.json").read_text())
    assert summary["cases"] == CASES and final["triage"] >= 1
    assert _tree(neighbour) == before
    with capsys.disabled():
        print(f"\nkill sweep: start-up to the first finding {startup:.0f} s; {kills} kill points, {ends} runs ended on their own, runs {dict(runs)}; "
              f"journal: {final['findings']} findings, {final['identities']} identities, {final['triage']} triage "
              f"results; last check before the end: {seen}; final cases {summary['cases']}, "
              f"buckets {len(summary['buckets'])}, queued {summary['queued']}")
