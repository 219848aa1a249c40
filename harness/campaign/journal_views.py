"""The views of a campaign's journal: summary.json, findings/, queue/ and the report, made again from it alone.

Why: see Note [The journal is the campaign] (campaign/journal.py). `replay` feeds the journal's facts, in order, to a
fresh `Ledger` with its journal off: each finding is recorded, each triage result applied, each known-issue
verdict taken as it was journaled, exactly as the campaign did when it learned them. The bucket folders and the
queue come out of that (the ledger writes them), counts the journal does not hold fact by fact (cases, features,
timings) come from the last `progress` fact, and the settings from the `settings` fact (a `resume` fact may
extend the budget or `--cases`): no later command rewrites them. `rebuild(OUT)` writes every view;
`dynfuzz report DIR`, `--resume` and `dynfuzz triage` start from it.
"""
from __future__ import annotations

import json
import shutil
from collections import Counter
from pathlib import Path
from typing import Any

from dynfuzz.campaign.config import CampaignConfig
from dynfuzz.campaign.journal import decode, last, read_journal, settings_fact
from dynfuzz.report import write_campaign_report
from dynfuzz.triage.buckets import row_is_bug
from dynfuzz.triage.issue import with_section
from dynfuzz.triage.known import KnownIssues
from dynfuzz.triage.pending import Job

# summary.json fields that are settings: written once by the `settings` fact, never by a later command
SETTINGS_FIELDS = ("torch", "python", "hypothesis", "dynfuzz_commit", "torch_patches", "backend", "device",
                   "fullgraph", "dynamic", "compiler", "backends", "cross_device", "seed", "families", "workers",
                   "budget_seconds", "max_cases", "shard", "known_file", "mutants", "disabled_constructs", "swarm")
# process fields of summary.json too large to journal with every progress fact (every 10 s, and at the end)
LARGE_PROCESS_FIELDS = frozenset({"behaviours", "coverage", "guided", "torch_observers"})
# ledger counters the journal holds only as totals (in `progress`), not fact by fact
_COUNTERS = ("cases", "eager_errors", "crashes", "hangs", "torch_seconds", "seconds")
_COUNTED = ("features", "timing_sums", "reference", "unsupported_constructs", "skipped")


def settings_of(summary: dict[str, Any], spec: Any) -> dict[str, Any]:
    """The `settings` fact's fields of a campaign's first summary, and its compile spec whole."""
    from dataclasses import asdict

    out = {k: summary.get(k) for k in SETTINGS_FIELDS}
    out["spec"] = asdict(spec)
    out["minimize_budget"] = (summary.get("triage") or {}).get("minimize_budget")
    return out


def effective_settings(facts: list[dict[str, Any]], out: Path) -> dict[str, Any]:
    """The settings fact, with what later `resume` facts extended (the total budget, `--cases`) and what a `pool`
    fact found once the workers started (a Ray cluster's size)."""
    settings = dict(settings_fact(facts, out))
    for row in facts:
        if row["fact"] in ("resume", "pool"):
            settings.update(row.get("settings", {}))
    return settings


def counts_of(ledger: Any) -> dict[str, Any]:
    """The `progress` fact's counts: the ledger's totals the journal holds no fact for."""
    row: dict[str, Any] = {name: getattr(ledger, name) for name in _COUNTERS}
    row.update({name: dict(getattr(ledger, name)) for name in _COUNTED})
    return row


class _Waiting:
    """The triage lanes while a journal is replayed: what was submitted and has no result yet."""

    def __init__(self) -> None:
        self.jobs: dict[str, tuple] = {}

    def submit(self, ident: str, case: Any, finding: Any, meta: dict[str, Any], priority: int) -> None:
        self.jobs[ident] = (ident, case, finding, meta, priority)

    def __len__(self) -> int:
        return len(self.jobs)


def config_for(out: Path, settings: dict[str, Any], known: Any = None, **extra: Any) -> Any:
    """A CampaignConfig with the journal's settings (a replay files and keys exactly as the campaign did)."""
    from dynfuzz.run.compilers import CompileSpec

    spec = dict(settings.get("spec") or {})
    spec["backends"] = tuple(spec.get("backends", ()))
    if known is None:
        path = settings.get("known_file")
        known = KnownIssues.load(Path(path)) if path and Path(path).is_file() else KnownIssues()
    values = {"budget": float(settings.get("budget_seconds") or 0), "out": out, "seed": settings.get("seed") or 0,
              "spec": CompileSpec(**spec), "families": tuple(settings.get("families") or ()),
              "workers": int(settings.get("workers") or 1), "max_cases": settings.get("max_cases"), "known": known,
              "progress": False, "minimize_budget": settings.get("minimize_budget")}
    values.update(extra)
    return CampaignConfig(**values)


def replay(ledger: Any, facts: list[dict[str, Any]], triaging: bool) -> list[Any]:
    """Apply `facts` to a fresh `ledger` (journal off), rewriting findings/ and queue/ from nothing. Returns the
    triage jobs submitted and not answered (`triaging`: whether the campaign triaged at all)."""
    out = ledger.config.out
    for name in ("findings", "queue"):
        shutil.rmtree(out / name, ignore_errors=True)
    ledger.findings_dir.mkdir(parents=True, exist_ok=True)
    journal, ledger.journal = ledger.journal, None
    hook, ledger.on_new_finding = ledger.on_new_finding, None
    waiting, lanes = _Waiting(), ledger.triage
    ledger.triage = waiting if triaging else None
    for row in facts:
        if row["fact"] == "known":
            ledger.known_verdicts.setdefault(row["key"], bool(row["known"]))
    programs: dict[str, tuple[Any, Any]] = {}
    for row in facts:
        kind = row["fact"]
        if "seconds" in row:
            ledger.seconds = float(row["seconds"])
        if kind == "finding":
            if "case" in row and row["ident"] not in programs:
                programs[row["ident"]] = (decode(row["case"]), decode(row["finding"]))
            if row["ident"] in programs:
                ledger.triage = waiting if row.get("triaged", triaging) else None
                ledger.journaled.add(row["ident"])
                ledger.record(*programs[row["ident"]])
        elif kind == "triage":
            ledger.triage = waiting  # a result came back: the campaign triaged
            ledger.apply_triage(row["ident"], row["status"], decode(row["payload"]))
            waiting.jobs.pop(row["ident"], None)
        elif kind == "harness-error":
            ledger.harness_errors.counts[row["kind"]] += 1
            if len(ledger.harness_errors.rows) < 200:
                file = f"harness-errors/{row['kind']}-{row.get('seed') if row.get('seed') is not None else 'noseed'}.txt"
                ledger.harness_errors.rows.append({"kind": row["kind"], "seed": row.get("seed"),
                                                   "message": row.get("message", ""),
                                                   "file": str(out / file) if (out / file).is_file() else None})
    progress = last(facts, "progress")
    if progress is not None:
        counts = progress["counts"]
        for name in _COUNTERS:
            setattr(ledger, name, counts.get(name, 0))
        for name in _COUNTED:
            setattr(ledger, name, Counter(counts.get(name, {})))
    after = max((i for i, row in enumerate(facts) if row["fact"] == "progress"), default=-1)
    ledger.unconfirmed = Counter((row["ident"], row["seed"]) for row in facts[after + 1:]
                                 if row["fact"] == "finding" and row.get("seed") is not None)
    ledger.journal, ledger.on_new_finding, ledger.triage = journal, hook, lanes
    return [Job(ident, case, f, priority, meta) for ident, case, f, meta, priority in waiting.jobs.values()]


def _apply_releases(ledger: Any, facts: list[dict[str, Any]]) -> None:
    """`release` facts onto the buckets they name (by key): their row fields, and report.md's section. A release
    check of a bucket that only settling files (a suspect still waiting, `unminimized`) was dropped when this
    ran before `Ledger.settle`."""
    for row in facts:
        if row["fact"] != "release":
            continue
        for key, verdict in row.get("buckets", {}).items():
            bucket = ledger.filer.buckets.get(key)
            if bucket is None:
                continue
            bucket.extra.update(verdict["fields"])
            for gone in verdict.get("dropped", ()):
                bucket.extra.pop(gone, None)
            report = bucket.folder / "report.md"
            if report.is_file() and verdict.get("section"):
                report.write_text(with_section(report.read_text(), verdict["section"]))


def latest_process(facts: list[dict[str, Any]]) -> dict[str, Any]:
    """The process fields of the last `progress` fact, the large ones from the last fact that holds them."""
    process: dict[str, Any] = {}
    for row in reversed(facts):
        if row["fact"] == "progress":
            for key, value in row.get("process", {}).items():
                process.setdefault(key, value)
            if LARGE_PROCESS_FIELDS & set(row.get("process", {})):
                break
    return process


def compose(ledger: Any, facts: list[dict[str, Any]], out: Path, process: dict[str, Any] | None = None,
            settings: dict[str, Any] | None = None) -> dict[str, Any]:
    """summary.json: the ledger's counts and buckets, the process fields of the run (`process`, else the last
    `progress` fact's), then the journal's settings over both, and what later commands journaled."""
    if process is None:
        process = latest_process(facts)
    settings = settings if settings is not None else effective_settings(facts, out)
    summary = {**ledger.summary(), **process}
    summary.update({k: settings[k] for k in SETTINGS_FIELDS if k in settings})
    spec = settings.get("spec") or {}
    summary["reference"] = {**summary.get("reference", {}), "enabled": spec.get("reference", False),
                            "guards": spec.get("guards", False)}
    summary["triage"] = {**(summary.get("triage") or {}), "minimize_budget": settings.get("minimize_budget")}
    summary["queued"] = len(ledger.pending)
    summary["triage_runs"] = [r["run"] for r in facts if r["fact"] == "triage-run"]
    stop = last(facts, "stop")
    if stop is not None and "stopped_by" not in process:
        summary["stopped_by"], summary["unfinished"] = stop.get("stopped_by"), stop.get("unfinished", 0)
    release = last(facts, "release")
    if release is not None:
        summary["releases"] = release["block"]
        summary["bugs"] = sum(1 for b in summary["buckets"] if row_is_bug(b))
    return summary


def write_summary(out: Path, summary: dict[str, Any]) -> None:
    path = Path(out) / "summary.json"
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(summary, indent=2) + "\n")
    tmp.replace(path)


def ledger_from_journal(out: Path, known: Any = None, settle: bool = True) -> tuple[Any, list[Any], list[dict]]:
    """A ledger with everything the journal of `out` holds, the views it writes rewritten; the jobs waiting."""
    from dynfuzz.campaign.ledger import Ledger

    facts = read_journal(out)
    settings = effective_settings(facts, out)
    ledger = Ledger(config_for(out, settings, known))
    jobs = replay(ledger, facts, triaging=settings.get("minimize_budget") is not None)
    if settle:
        ledger.settle()
    _apply_releases(ledger, facts)  # after settle: an unminimized bucket of a waiting suspect is made there
    return ledger, jobs, facts


def rebuild(out: Path, report: bool = True) -> dict[str, Any]:
    """Every view of the campaign in `out` made again from its journal (the caller holds the folder's lock)."""
    ledger, _jobs, facts = ledger_from_journal(out)
    summary = compose(ledger, facts, out)
    write_summary(out, summary)
    if report:
        samples = out / "samples.json"
        write_campaign_report(out, [tuple(s) for s in json.loads(samples.read_text())] if samples.is_file() else [])
    return summary
