"""The campaign's ledger: counts, findings filed once each, and `summary.json`.

Kept apart from the loop in `campaign.py` (which schedules cases onto workers or a cluster) so that
what is counted and filed, and how, lives in one place whatever ran the cases.
"""
from __future__ import annotations

import json
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dynfuzz.generators.case import Case
from dynfuzz.oracles import Finding, finding
from dynfuzz.oracles.model import SEVERITY
from dynfuzz.triage.repro import torch_version, write_finding

if TYPE_CHECKING:
    from dynfuzz.run.campaign import CampaignConfig


@dataclass
class Unique:
    finding: Finding
    path: Path | None
    seed: int | None
    count: int = 1


class Ledger:
    """Everything a campaign counts and files; `Campaign` feeds it finished cases through `_finish`."""

    def __init__(self, config: CampaignConfig) -> None:
        self.config = config
        self.findings_dir = config.out / "findings"
        self.unique: dict[str, Unique] = {}
        self.known_hits: Counter[str] = Counter()
        self.features: Counter[str] = Counter()
        self.by_oracle: Counter[str] = Counter()
        self.by_kind: Counter[str] = Counter()
        self.cases = 0
        self.findings = 0
        self.eager_errors = 0
        self.crashes = 0
        self.hangs = 0
        self.torch_seconds = 0.0
        self.timing_sums: Counter[str] = Counter()
        self.reference: Counter[str] = Counter()
        self.unsupported_constructs: Counter[str] = Counter()
        self.seconds = 0.0
        self.startup_seconds = 0.0
        self.replayed = 0
        self.findings_db = None

    # ---- bookkeeping ----
    def _finish(self, case: Case, status: str, payload: Any) -> None:
        self.cases += 1
        self.features.update(case.tags)
        if status == "done":
            result = payload
            self.torch_seconds += result.torch_seconds
            for k, v in result.timings.items():
                self.timing_sums[k] += v
            if not result.eager_ok:
                self.eager_errors += 1
            status = result.reference.get("status")
            if status and status != "off":
                self.reference[status] += 1
                if status != "traced":
                    self.unsupported_constructs[str(result.reference.get("construct"))] += 1
            for f in result.findings:
                self.record(case, f)
            return
        if status == "crash":
            self.crashes += 1
            f = finding("harness", "crash", f"the worker process died (exit code {payload}) running this case",
                        f"worker exit {payload}", details=(f"exit code {payload}",))
        elif status == "hang":
            self.hangs += 1
            f = finding("harness", "hang", f"the case ran longer than {payload:.0f} s", "timeout")
        else:
            f = finding("harness", "harness-error", f"the harness failed on this case: {payload}", str(payload),
                        severity="info")
        self.record(case, f)

    def record(self, case: Case, f: Finding) -> None:
        """Count a finding; save it once per signature unless it is a known upstream issue."""
        self.findings += 1
        self.by_oracle[f.oracle] += 1
        self.by_kind[f.kind] += 1
        if f.signature in self.config.known:
            self.known_hits[f.signature] += 1
            return
        if f.signature in self.unique:
            self.unique[f.signature].count += 1
            return
        path = write_finding(self.findings_dir, case, f, self.config.spec)
        self.unique[f.signature] = Unique(f, path, case.seed)
        if self.findings_db is not None:
            self.findings_db.save(case)

    def status(self) -> dict[str, Any]:
        return {"cases": self.cases, "seconds": self.seconds, "findings": self.findings, "unique": len(self.unique)}

    def unique_rows(self) -> list[Unique]:
        return sorted(self.unique.values(), key=lambda u: (-_severity(u.finding), -u.count))

    def summary(self) -> dict[str, Any]:
        cfg = self.config
        seconds = max(self.seconds, 1e-9)
        workers = max(cfg.workers, 1)
        n = max(self.cases, 1)
        return {
            "torch": torch_version(),
            "python": sys.version.split()[0],
            "backend": cfg.spec.backend,
            "device": cfg.spec.device,
            "fullgraph": cfg.spec.fullgraph,
            "dynamic": cfg.spec.dynamic,
            "compiler": cfg.spec.compiler,
            "seed": cfg.seed,
            "families": list(cfg.families),
            "workers": cfg.workers,
            "budget_seconds": cfg.budget,
            "seconds": round(self.seconds, 3),
            "startup_seconds": round(self.startup_seconds, 3),
            "cases": self.cases,
            "replayed_from_database": self.replayed,
            "cases_per_second": round(self.cases / seconds, 3),
            "findings": self.findings,
            "unique": len(self.unique),
            "known": sum(self.known_hits.values()),
            "known_signatures": dict(self.known_hits),
            "by_oracle": dict(self.by_oracle),
            "by_kind": dict(self.by_kind),
            "crashes": self.crashes,
            "hangs": self.hangs,
            "eager_errors": self.eager_errors,
            "valid_fraction": round(1 - self.eager_errors / n, 4),
            "features": dict(sorted(self.features.items())),
            "torch_seconds": round(self.torch_seconds, 3),
            "overhead_fraction": round(1 - self.torch_seconds / (seconds * workers), 4),
            "mean_timings": {k: round(v / n, 5) for k, v in sorted(self.timing_sums.items())},
            "reference": {"enabled": cfg.spec.reference, "guards": cfg.spec.guards, **dict(self.reference),
                          "unsupported_constructs": dict(self.unsupported_constructs)},
            "unique_findings": [
                {"signature": u.finding.signature, "oracle": u.finding.oracle, "kind": u.finding.kind,
                 "severity": u.finding.severity, "message": u.finding.message, "count": u.count,
                 "seed": u.seed, "file": str(u.path) if u.path else None}
                for u in self.unique_rows()
            ],
        }

    def write_summary(self) -> dict[str, Any]:
        summary = self.summary()
        path = self.config.out / "summary.json"
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(summary, indent=2) + "\n")
        tmp.replace(path)
        return summary




def _severity(f: Finding) -> int:
    return SEVERITY.get(f.severity, 0)
