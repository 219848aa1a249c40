"""The counting part of `summary.json`, read off a campaign's ledger (campaign/ledger.py): its fields are a contract
users' scripts read (docs/summary-json.md), so they are extended, never renamed."""
from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from dynfuzz.campaign.journal import relative
from dynfuzz.oracles.model import SEVERITY
from dynfuzz.run.multi_backend import layer_summary
from dynfuzz.run.provenance import provenance
from dynfuzz.triage.pending import Job, identity
from dynfuzz.triage.repro import torch_version


def unique_rows(ledger: Any) -> list[Any]:
    """Every identity: filed ones, and suspects waiting for their own triage (bucket None)."""
    return sorted([*ledger.unique.values(), *ledger.suspects.values()],
                  key=lambda u: (-SEVERITY.get(u.finding.severity, 0), -u.count))

def _waiting_program(ledger: Any, u: Any) -> Path | None:
    """The queued repro of a suspect filed nowhere yet (`queue/<id>.py`), when it is there."""
    if u.bucket is not None:
        return None
    job = Job(identity(u.finding.signature, u.cheap_key or ""), None, u.finding)  # type: ignore[arg-type]
    path = ledger.pending.folder / f"{job.file_id}.py"
    return path if path.is_file() else None

def _bucket_row(ledger: Any, bucket: Any) -> dict[str, Any]:
    """A bucket's summary.json row, its paths relative to OUT (never to the working directory)."""
    row = bucket.summary()
    row["folder"] = relative(ledger.config.out, bucket.folder)
    row["repro"] = relative(ledger.config.out, row["repro"]) if row["repro"] else None
    return row

def summary(ledger: Any) -> dict[str, Any]:
    """The counting part of `summary.json` (the campaign adds settings of its processes and coverage)."""
    cfg = ledger.config
    seconds = max(ledger.seconds, 1e-9)
    workers = max(cfg.workers, 1)
    n = max(ledger.cases, 1)
    return {
        "torch": torch_version(),
        "python": sys.version.split()[0],
        **provenance(),  # hypothesis, dynfuzz_commit, torch_patches (run/provenance.py)
        "backend": cfg.spec.backend,
        "device": cfg.spec.device,
        "fullgraph": cfg.spec.fullgraph,
        "dynamic": cfg.spec.dynamic,
        "compiler": cfg.spec.compiler,
        "backends": list(cfg.spec.backends),
        "cross_device": cfg.spec.cross_device,
        "seed": cfg.seed,
        "families": list(cfg.families),
        "workers": cfg.workers,
        "budget_seconds": cfg.budget,
        "seconds": round(ledger.seconds, 3),
        "cases": ledger.cases,
        "cases_per_second": round(ledger.cases / seconds, 3),
        "findings": ledger.findings,
        "unique": len(ledger.unique) + len(ledger.suspects),
        "known": sum(ledger.known_hits.values()),
        "known_signatures": dict(ledger.known_hits),
        "known_verified": cfg.known.verifications(),  # Note [Known issues on an unlisted release]
        "by_oracle": dict(ledger.by_oracle),
        "by_kind": dict(ledger.by_kind),
        "crashes": ledger.crashes,
        "hangs": ledger.hangs,
        "eager_errors": ledger.eager_errors,
        "skipped": dict(ledger.skipped),
        "valid_fraction": round(1 - ledger.eager_errors / n, 4),
        "features": dict(sorted(ledger.features.items())),
        "torch_seconds": round(ledger.torch_seconds, 3),
        "overhead_fraction": round(1 - ledger.torch_seconds / (seconds * workers), 4),
        "mean_timings": {k: round(v / n, 5) for k, v in sorted(ledger.timing_sums.items())},
        "by_layer": dict(ledger.by_layer),
        "layers": layer_summary(ledger.timing_sums, ledger.cases, ledger.by_layer),
        "reference": {"enabled": cfg.spec.reference, "guards": cfg.spec.guards, **dict(ledger.reference),
                      "unsupported_constructs": dict(ledger.unsupported_constructs)},
        "unique_findings": [
            {"signature": u.finding.signature, "oracle": u.finding.oracle, "kind": u.finding.kind,
             "severity": u.finding.severity, "message": u.finding.message, "count": u.count,
             "seed": u.seed, "file": relative(cfg.out, u.path or _waiting_program(ledger, u)), "bucket": u.bucket,
             "layer": u.finding.layer, "cheap_key": u.cheap_key, "waiting": u.bucket is None,
             "verdict": u.verdict}
            for u in unique_rows(ledger)
        ],
        "bugs": ledger.filer.bugs(),
        "refusals": ledger.filer.in_tier("refusal"),
        "performance": ledger.filer.in_tier("performance"),
        "buckets": [_bucket_row(ledger, b) for b in ledger.filer.rows()],
        "internal_errors": ledger.filer.internal(),
        "queued": len(ledger.pending),
        "crash_joins": ledger.crash_joins.summary(),
        "harness_errors": ledger.harness_errors.summary(),
        "harness_error_records": [{**r, "file": relative(cfg.out, r["file"])} for r in ledger.harness_errors.rows],
    }
