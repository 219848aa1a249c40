"""A campaign folder read back into a ledger: counts, findings, buckets and the triage jobs still waiting.

One loader for the two tools that continue a campaign in its own folder: `dynfuzz fuzz --resume DIR` (more
cases, campaign/resume.py) and `dynfuzz triage DIR` (the triage the campaign did not finish, campaign/finish.py). Both
read `summary.json` (rewritten atomically after every batch of finished cases), the bucket folders it names,
and `queue/` (Note [Nothing waits only in memory]); neither re-files what is on disk.
"""
from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

from dynfuzz.errors import UsageError
from dynfuzz.oracles import Finding
from dynfuzz.report.data import resolve_path
from dynfuzz.triage.filing import Bucket, explanation_from_row
from dynfuzz.triage.pending import SUSPECT, Job

_COUNTERS = ("cases", "findings", "crashes", "hangs", "eager_errors")
_COUNTED = {"features": "features", "by_oracle": "by_oracle", "by_kind": "by_kind", "by_layer": "by_layer",
            "skipped": "skipped", "known_signatures": "known_hits"}


def read_summary(out: Path, flag: str) -> dict[str, Any]:
    """`DIR/summary.json`; missing, corrupt or foreign: a one-line usage error naming `flag`."""
    path = Path(out) / "summary.json"
    if not path.is_file():
        raise UsageError(f"{flag} {out}: no summary.json there (is it a campaign's --out directory?)")
    try:
        summary = json.loads(path.read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise UsageError(f"{flag} {out}: summary.json is corrupt ({type(e).__name__}: {e})") from None
    if not isinstance(summary, dict) or not all(isinstance(r, dict) and "signature" in r
                                                for r in summary.get("unique_findings", [])):
        raise UsageError(f"{flag} {out}: summary.json's unique_findings are corrupt")
    findings = Path(out) / "findings"
    if findings.exists() and not findings.is_dir():
        raise UsageError(f"{flag} {out}: findings is not a directory")
    return summary


def _finding(row: dict[str, Any]) -> Finding:
    return Finding(row.get("oracle", "?"), row.get("kind", "?"), row.get("message", ""), row["signature"],
                   row.get("severity", "high"), layer=row.get("layer"))


def restore(ledger: Any, summary: dict[str, Any], out: Path) -> list[Job]:
    """Counts, findings and buckets of `summary` into a fresh `ledger`; returns the triage jobs still on disk,
    with their findings attached (a suspect that was not filed yet goes back among the ledger's suspects)."""
    from dynfuzz.campaign.ledger import Unique, identity

    for name in _COUNTERS:
        setattr(ledger, name, getattr(ledger, name) + int(summary.get(name, 0)))
    for field, attr in _COUNTED.items():
        getattr(ledger, attr).update(Counter(summary.get(field, {})))
    ledger.harness_errors.counts.update(Counter(summary.get("harness_errors", {})))
    ledger.torch_seconds += float(summary.get("torch_seconds", 0.0))
    ledger.seconds = float(summary.get("seconds", 0.0))
    cases = max(int(summary.get("cases", 0)), 1)
    for k, v in (summary.get("mean_timings") or {}).items():
        ledger.timing_sums[k] += float(v) * cases
    by_ident: dict[str, Unique] = {}
    for row in summary.get("unique_findings", []):
        u = Unique(_finding(row), resolve_path(out, row.get("file")), row.get("seed"),
                   int(row.get("count", 1)), row.get("bucket"), row.get("cheap_key"))
        ident = identity(u.finding.signature, u.cheap_key or "")
        by_ident[ident] = u
        ledger.unique[ident] = u
        ledger.first_of_signature.setdefault(u.finding.signature, ident)
        if u.cheap_key:
            ledger.cheap_keys_seen.add(u.cheap_key)
    for row in summary.get("buckets", []):
        if "explanation" not in row:
            raise UsageError(f"{out}: summary.json was written by an older dynfuzz (its buckets carry no "
                             f"explanation); start a new campaign")
        members = [u for u in by_ident.values() if u.bucket == row["key"]]
        known = {"id", "key", "cause", "oracle", "class", "tier", "count", "first_seen_seconds", "layer", "repro",
                 "status", "verdict", "folder", "signatures", "examples", "note", "triage_seconds", "phases",
                 "suspects", "explanation"}
        bucket = Bucket(row["key"], explanation_from_row(row["explanation"]), float(row.get("first_seen_seconds", 0)),
                        resolve_path(out, row["folder"]), members, row.get("status", "unminimized"), row.get("verdict"),
                        row.get("note", ""), float(row.get("triage_seconds", 0.0)), row.get("phases") or {},
                        row.get("suspects") or [], {k: v for k, v in row.items() if k not in known})
        ledger.filer.buckets[bucket.key] = bucket
    ledger.localized.update(b["key"] for b in summary.get("buckets", []) if b.get("suspects"))
    jobs = ledger.pending.load()
    for job in jobs:
        if job.ident.startswith("localize "):
            continue
        u = by_ident.get(job.ident)
        if u is None and job.priority == SUSPECT:  # still waiting, never filed
            u = Unique(job.finding, None, job.case.seed, cheap_key=job.meta.get("bucket_cheap"))
            ledger.suspects[job.ident] = u
        if u is not None:
            u.case, u.finding = job.case, job.finding
    return jobs
