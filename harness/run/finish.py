"""`dynfuzz triage DIR`: finish the triage a campaign left, in its own folder.

A campaign ends within its budget; what its triage lanes had not reached is on disk (`DIR/queue/`, Note
[Nothing waits only in memory]) and its buckets say `unminimized`. This rebuilds the campaign's ledger from
`DIR/summary.json` (run/campaign_state.py, the loader `--resume` uses too), runs the waiting jobs in priority
order on `--workers` triage lanes within `--budget`, applies each result as the campaign would have (re-key,
merge, known issue, localization), and rewrites `summary.json` after every result and the report at the end.
It is resumable: a job leaves the queue only once its result is applied, so a killed run is picked up again.
It refuses a folder made on another torch release: a job's program is judged against the torch that found it.
"""
from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from dynfuzz.errors import UsageError
from dynfuzz.run.campaign_state import read_summary, restore
from dynfuzz.run.compilers import CompileSpec
from dynfuzz.triage.known import KnownIssues, release
from dynfuzz.triage.repro import torch_version


def spec_of(summary: dict[str, Any]) -> CompileSpec:
    return CompileSpec(summary.get("compiler", "torch"), summary.get("backend", "eager"), summary.get("device", "cpu"),
                       bool(summary.get("fullgraph", False)), summary.get("dynamic"))


def finish_triage(out: Path, budget: float, workers: int, minimize_budget: float,
                  known: KnownIssues | None = None, lanes_cls: Any = None) -> dict[str, Any]:
    """Run the waiting triage jobs of the campaign in `out`; returns the rewritten summary."""
    from dynfuzz.report import write_campaign_report
    from dynfuzz.run.campaign import CampaignConfig
    from dynfuzz.run.ledger import Ledger
    from dynfuzz.run.out_folder import claim
    from dynfuzz.triage.queue import TriagePool

    summary = read_summary(out, "triage")
    ran_on, here = release(str(summary.get("torch", "?"))), release(torch_version())
    if ran_on != here:
        raise UsageError(f"triage {out}: the campaign ran on torch {ran_on}, this is torch {here} (triage judges "
                         f"each program again on the torch that found it: install {ran_on}, or use `dynfuzz "
                         f"releases`)")
    lock = claim(out, resume=True, verb="triage")  # noqa: F841  (held while it runs)
    if known is None:
        known = KnownIssues.load(Path(summary["known_file"])) if summary.get("known_file") else KnownIssues()
    config = CampaignConfig(budget=budget, out=out, seed=summary.get("seed", 0), spec=spec_of(summary),
                            families=tuple(summary.get("families", ())), workers=workers, known=known,
                            progress=False)
    ledger = Ledger(config)
    jobs = restore(ledger, summary, out)
    pool = (lanes_cls or TriagePool)(config.spec, minimize_budget, max(1, workers), log_dir=out / "workers")
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
                _write(out, summary, ledger, done, len(pool))
    finally:
        left = len(pool)
        pool.drain(time.monotonic())
    ledger.settle()
    result = _write(out, summary, ledger, done, left)
    samples = out / "samples.json"
    write_campaign_report(out, [tuple(s) for s in json.loads(samples.read_text())] if samples.is_file() else [])
    return result


def _write(out: Path, old: dict[str, Any], ledger: Any, done: int, left: int) -> dict[str, Any]:
    """The campaign's summary with the ledger's counts and buckets as they are now (atomically)."""
    summary = {**old, **ledger.summary()}
    summary["seconds"], summary["cases_per_second"] = old.get("seconds"), old.get("cases_per_second")
    history = list(old.get("triage_runs", []))
    summary["triage_runs"] = history + [{"jobs": done, "left": left, "torch": torch_version()}]
    path = out / "summary.json"
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(summary, indent=2) + "\n")
    tmp.replace(path)
    return summary
