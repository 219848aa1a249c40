"""`dynfuzz triage DIR`: finish the triage a campaign left, in its own folder.

A campaign ends within its budget; what its triage lanes had not reached is on disk (`DIR/queue/`, Note
[Nothing waits only in memory]) and its buckets say `unminimized`. This rebuilds the campaign's ledger from
its journal (or, for an earlier layout, `DIR/summary.json` with campaign/campaign_state.py), runs the waiting
jobs in priority order on `--workers` triage lanes within `--budget`, applies each result as the campaign
would have (re-key, merge, known issue, localization), and rewrites `summary.json` after every result and
the report at the end.
A journaled campaign (campaign/journal.py) is replayed from its journal instead, and each result is appended to it
before it is applied; the campaign's settings are the journal's and never this command's. It is resumable: a
job's result is journaled before its queue file goes, so a killed run is picked up again.
It refuses a folder made on another torch release: a job's program is judged against the torch that found it.
"""
from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from dynfuzz.campaign.campaign_state import read_summary, restore
from dynfuzz.errors import UsageError
from dynfuzz.report import write_campaign_report
from dynfuzz.run.compilers import CompileSpec
from dynfuzz.triage.known import KnownIssues, release
from dynfuzz.triage.queue import TriagePool
from dynfuzz.triage.repro import torch_version


def spec_of(summary: dict[str, Any]) -> CompileSpec:
    """The compile spec an earlier layout's summary.json records (its backends and reference included)."""
    reference = summary.get("reference") or {}
    return CompileSpec(summary.get("compiler", "torch"), summary.get("backend", "eager"), summary.get("device", "cpu"),
                       bool(summary.get("fullgraph", False)), summary.get("dynamic"),
                       bool(reference.get("enabled", False)), bool(reference.get("guards", False)),
                       tuple(summary.get("backends") or ()), bool(summary.get("cross_device", False)))


def _same_torch(out: Path, ran: str) -> None:
    ran_on, here = release(ran), release(torch_version())
    if ran_on != here:
        raise UsageError(f"triage {out}: the campaign ran on torch {ran_on}, this is torch {here} (triage judges "
                         f"each program again on the torch that found it: install {ran_on}, or use `dynfuzz "
                         f"releases`)")


def finish_triage(out: Path, budget: float, workers: int, minimize_budget: float,
                  known: KnownIssues | None = None, lanes_cls: Any = None) -> dict[str, Any]:
    """Run the waiting triage jobs of the campaign in `out`; returns the rewritten summary. A journaled campaign
    gets each result appended to its journal and its views made again from it (never its settings: those are
    the campaign's); an earlier layout is read from, and written back to, its summary.json."""
    from dynfuzz.campaign.journal import has_journal

    if not has_journal(out):
        return _finish_summary_layout(out, budget, workers, minimize_budget, known, lanes_cls)
    from dynfuzz.campaign.journal import Journal, read_journal
    from dynfuzz.campaign.journal_views import compose, effective_settings, ledger_from_journal, write_summary
    from dynfuzz.campaign.out_folder import claim

    _same_torch(out, str(effective_settings(read_journal(out), out).get("torch", "?")))
    lock = claim(out, resume=True, verb="triage")  # noqa: F841  (held while it runs)
    ledger, jobs, facts = ledger_from_journal(out, known, settle=False)
    journal = Journal(out)
    ledger.journal = journal
    pool = (lanes_cls or TriagePool)(ledger.config.spec, minimize_budget, max(1, workers), log_dir=out / "workers")
    done, left = _run_jobs(pool, ledger, jobs, budget, lambda done, waiting: write_summary(
        out, compose(ledger, facts, out)))
    facts.append(journal.append("triage-run", run={"jobs": done, "left": left, "torch": torch_version()}))
    journal.close()
    ledger.settle()
    result = compose(ledger, facts, out)
    write_summary(out, result)
    samples = out / "samples.json"
    write_campaign_report(out, [tuple(s) for s in json.loads(samples.read_text())] if samples.is_file() else [])
    return result


def _run_jobs(pool: Any, ledger: Any, jobs: list[Any], budget: float,
              after: Callable[[int, int], None]) -> tuple[int, int]:
    """The waiting `jobs` through `pool` for at most `budget` s, each result applied to `ledger` and then
    `after(done, still_waiting)`; returns the jobs done and those left (they stay on disk)."""
    ledger.triage = pool
    for job in jobs:
        pool.submit(job.ident, job.case, job.finding, job.meta, job.priority)
    deadline = time.monotonic() + budget
    done = 0
    try:
        while len(pool) and time.monotonic() < deadline:
            for ident, status, payload in pool.poll(wait=min(0.5, max(deadline - time.monotonic(), 0.0))):
                ledger.apply_triage(ident, status, payload)
                done += 1
                after(done, len(pool))
    finally:
        left = len(pool)
        pool.drain(time.monotonic())
    return done, left


def _finish_summary_layout(out: Path, budget: float, workers: int, minimize_budget: float,
                           known: KnownIssues | None, lanes_cls: Any) -> dict[str, Any]:
    """`dynfuzz triage` on a folder an earlier dynfuzz wrote (summary.json, no journal)."""
    from dynfuzz.campaign.campaign import CampaignConfig
    from dynfuzz.campaign.ledger import Ledger
    from dynfuzz.campaign.out_folder import claim

    summary = read_summary(out, "triage")
    _same_torch(out, str(summary.get("torch", "?")))
    lock = claim(out, resume=True, verb="triage")  # noqa: F841  (held while it runs)
    if known is None:
        known = KnownIssues.load(Path(summary["known_file"])) if summary.get("known_file") else KnownIssues()
    config = CampaignConfig(budget=budget, out=out, seed=summary.get("seed", 0), spec=spec_of(summary),
                            families=tuple(summary.get("families", ())), workers=workers, known=known,
                            progress=False)
    ledger = Ledger(config)
    jobs = restore(ledger, summary, out)
    pool = (lanes_cls or TriagePool)(config.spec, minimize_budget, max(1, workers), log_dir=out / "workers")
    done, left = _run_jobs(pool, ledger, jobs, budget, lambda done, waiting: _write(out, summary, ledger, done,
                                                                                      waiting))
    ledger.settle()
    result = _write(out, summary, ledger, done, left)
    samples = out / "samples.json"
    write_campaign_report(out, [tuple(s) for s in json.loads(samples.read_text())] if samples.is_file() else [])
    return result


def _write(out: Path, old: dict[str, Any], ledger: Any, done: int, left: int) -> dict[str, Any]:
    """The campaign's summary with the ledger's counts and buckets as they are now (atomically)."""
    from dynfuzz.campaign.journal_views import SETTINGS_FIELDS

    summary = {**old, **ledger.summary(), **{k: old[k] for k in SETTINGS_FIELDS if k in old}}
    summary["seconds"], summary["cases_per_second"] = old.get("seconds"), old.get("cases_per_second")
    history = list(old.get("triage_runs", []))
    summary["triage_runs"] = history + [{"jobs": done, "left": left, "torch": torch_version()}]
    path = out / "summary.json"
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(summary, indent=2) + "\n")
    tmp.replace(path)
    return summary
