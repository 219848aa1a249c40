"""The campaign's ledger: counts, findings filed by root-cause bucket, and `summary.json`.

Kept apart from the loop in `campaign.py` (which schedules cases onto workers or a cluster) so that
what is counted and filed, and how, lives in one place whatever ran the cases.

Filing (see docs/findings.md, "Root-cause buckets"): every finding gets a cheap key (the bucket key computed on the
unminimized program, no judge call). A finding is new when its signature and cheap key are, together:
a signature alone ("out[0] values differ") is shared by unrelated bugs, and counting a second bug into the
first one's bucket (or into a known issue's) because its symptom reads the same would hide it. A new
finding is filed under `findings/<slug>-<id>/examples/`. A cheap
key seen for the first time is handed to the minimization queue; when it comes back minimized and
explained, its bucket is re-keyed by the explained key (merged into an existing bucket, or dropped as
a known issue) and gets `repro.py` and `report.md`. What the queue has not finished by the end stays
under its cheap key, marked `unminimized`.

A finding whose signature is already filed under another cheap key is a suspect: most are the same bug
reached through other program text, some are a second bug. With the queue on, it is not filed at once but
triaged on the side, and re-filed by its explained key when that comes back (into its own bucket when the
cause is new, else into the known issue or bucket the key names); a suspect still waiting at the end is
counted with the first finding of its signature, as it would have been without the queue.
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
from dynfuzz.run.behaviour_log import BehaviourLog
from dynfuzz.run.harness_errors import HarnessError, HarnessErrorLog
from dynfuzz.run.line_coverage import Tracker
from dynfuzz.run.line_coverage_report import summary_block
from dynfuzz.run.multi_backend import layer_summary
from dynfuzz.run.torch_observers import record as observer_record
from dynfuzz.triage.explain import cheap_explanation
from dynfuzz.triage.filing import BucketFiler
from dynfuzz.triage.repro import torch_version

if TYPE_CHECKING:
    from dynfuzz.run.campaign import CampaignConfig


@dataclass
class Unique:
    finding: Finding
    path: Path | None  # the example file, inside its bucket's examples/ (None when not kept: over 5)
    seed: int | None
    count: int = 1
    bucket: str | None = None  # the key of the bucket it is filed in
    cheap_key: str | None = None  # the bucket key of the program as it was found (before minimization)
    case: Case | None = None  # a suspect's case, kept until it is filed


def identity(signature: str, cheap_key: str) -> str:
    """What makes a finding new in a campaign: its signature together with its cheap bucket key."""
    return f"{signature} {cheap_key}"


class Ledger:
    """Everything a campaign counts and files; `Campaign` feeds it finished cases through `_finish`."""

    def __init__(self, config: CampaignConfig) -> None:
        self.config = config
        self.findings_dir = config.out / "findings"
        self.unique: dict[str, Unique] = {}
        self.known_hits: Counter[str] = Counter()
        self.known_by_identity: dict[str, str] = {}  # identity() of findings keyed as known issues -> key
        self.first_of_signature: dict[str, str] = {}  # signature -> identity of its first finding filed or known
        self.suspects: dict[str, Unique] = {}  # identity -> a finding waiting for its side triage
        self.features: Counter[str] = Counter()
        self.by_oracle: Counter[str] = Counter()
        self.by_kind: Counter[str] = Counter()
        self.by_layer: Counter[str] = Counter()  # first diverging layer (with --backends / --cross-device)
        self.cases = 0
        self.findings = 0
        self.eager_errors = 0
        self.crashes = 0
        self.hangs = 0
        self.torch_seconds = 0.0
        self.timing_sums: Counter[str] = Counter()
        self.reference: Counter[str] = Counter()
        self.unsupported_constructs: Counter[str] = Counter()
        self.skipped: Counter[str] = Counter()  # cases not judged, by reason (a deliberate refusal)
        self.seconds = 0.0
        self.startup_seconds = 0.0
        self.replayed = 0
        self.findings_db = None
        self.harness_errors = HarnessErrorLog(config.out / "harness-errors")
        self.previous: dict[str, dict[str, Any]] = {}  # --resume: identities the earlier run found (run/resume.py)
        self.resumed: dict[str, Any] | None = None
        self.filer = BucketFiler(self.findings_dir, config.spec, config.known, torch_version())
        self.nodes: Counter[str] = Counter()  # cases per cluster node (with --ray)
        coverage = getattr(config, "coverage", None)
        self.tracker = Tracker(coverage) if coverage is not None else None
        self.guide = None  # a run.guided.Guide when the campaign is guided (--guided)
        self.coverage_report: dict[str, Any] | None = None
        self.coverage_seconds = 0.0
        self.behaviour_log = BehaviourLog()

    # ---- bookkeeping ----
    def _finish(self, case: Case, status: str, payload: Any) -> None:
        self.cases += 1
        new_lines = None
        if self.tracker is not None:
            new_lines = self.tracker.add(payload.coverage if status == "done" else None)
        novelty = None
        if status == "done":  # run/behaviour_log.py
            novelty = self.behaviour_log.add(payload.behaviours, self.seconds, payload.observers)
        if self.guide is not None:
            self.guide.observe(case, novelty, new_lines)
        self.features.update(case.tags)
        if status in ("harness-error", "error"):  # dynfuzz could not judge it: filed apart, never a finding
            self.harness_error(case, HarnessError.from_payload(payload))
            return
        if status == "done":
            result = payload
            self.torch_seconds += result.torch_seconds
            for k, v in result.timings.items():
                self.timing_sums[k] += v
            if not result.eager_ok:
                self.eager_errors += 1
            if getattr(result, "skipped", None):
                self.skipped[result.skipped] += 1
            status = result.reference.get("status")
            if status and status != "off":
                self.reference[status] += 1
                if status != "traced":
                    self.unsupported_constructs[str(result.reference.get("construct"))] += 1
            saved = len(self.unique)
            for f in result.findings:
                if f.oracle == "harness" and f.kind == "oracle-error":
                    self.harness_error(case, HarnessError("oracle", f.message, "\n".join(f.details)))
                else:
                    self.record(case, f)
            if getattr(result, "torch_log", "") and len(self.unique) > saved:
                self._attach_torch_log(case, result.torch_log)
            return
        if status == "crash":
            self.crashes += 1
            crash = payload if isinstance(payload, dict) else {"exitcode": payload}  # + the worker's log tail
            code = crash.get("exitcode")
            f = finding("harness", "crash", f"the worker process died (exit code {code}) running this case",
                        f"worker exit {code}", details=(f"exit code {code}", *filter(None, [crash.get("log")])))
        elif status == "hang":
            self.hangs += 1
            f = finding("harness", "hang", f"the case ran longer than {payload:.0f} s", "timeout")
        else:
            f = finding("harness", "harness-error", f"the harness failed on this case: {payload}", str(payload),
                        severity="info")
        self.record(case, f)

    def record(self, case: Case, f: Finding) -> None:
        """Count a finding; file it once per identity in its bucket unless it is a known issue."""
        self.findings += 1
        self.by_oracle[f.oracle] += 1
        self.by_kind[f.kind] += 1
        if f.layer:
            self.by_layer[f.layer] += 1
        cheap = cheap_explanation(case, f)
        ident = identity(f.signature, cheap.key)
        if ident in self.known_by_identity:  # its first occurrence was keyed as a known issue
            self.known_hits[self.known_by_identity[ident]] += 1
            return
        earlier = self.previous.get(ident) or self.previous.get(f.signature)
        if earlier is not None:  # found before a --resume: counted, never filed or reported again
            earlier["count"] = earlier.get("count", 1) + 1
            return
        if ident in self.unique:
            u = self.unique[ident]
            u.count += 1
            self.filer.count(u)
            return
        if ident in self.suspects:
            self.suspects[ident].count += 1
            return
        u = Unique(f, None, case.seed, cheap_key=cheap.key)
        if f.signature in self.first_of_signature and not self.filer.routed(cheap) and self.filer.probe(case, f, cheap):
            u.case = case
            self.suspects[ident] = u
            return
        self._file(case, u, ident, cheap)

    def _file(self, case: Case, u: Unique, ident: str, cheap: Any) -> None:
        f = u.finding
        self.first_of_signature.setdefault(f.signature, ident)
        if not self.filer.file(case, f, u, self.seconds, cheap):
            # Known issues match by bucket key, never by signature: a known one must not hide a new one.
            self.known_by_identity[ident] = u.bucket or f.signature
            self.known_hits[u.bucket or f.signature] += u.count
            return
        for _ in range(u.count - 1):
            self.filer.count(u)
        self.unique[ident] = u
        if self.findings_db is not None:
            self.findings_db.save(case)

    def _file_suspects(self) -> None:
        """File the suspects whose side triage has come back, by their explained key."""
        done = set(self.filer.resolved)
        self.filer.resolved.clear()
        for ident, u in list(self.suspects.items()):
            if u.cheap_key in done:
                del self.suspects[ident]
                case, u.case = u.case, None
                self._file(case, u, ident, cheap_explanation(case, u.finding))

    def _settle_suspects(self) -> None:
        """At the end: a suspect whose triage did not come back counts with its signature's first finding."""
        self._file_suspects()
        for u in self.suspects.values():
            first = self.first_of_signature[u.finding.signature]
            if first in self.unique:
                self.unique[first].count += u.count
                for _ in range(u.count):
                    self.filer.count(self.unique[first])
            else:
                self.known_hits[self.known_by_identity[first]] += u.count
        self.suspects.clear()

    def harness_error(self, case: Case, error: HarnessError) -> None:
        """File a case dynfuzz could not judge under OUT/harness-errors/ (see run/harness_errors.py)."""
        self.harness_errors.record(error, case.seed, case.families, case.source)

    def _attach_torch_log(self, case: Case, text: str) -> None:
        """torch's log lines from the case, beside each finding example it just saved."""
        for u in self.unique.values():
            if u.seed == case.seed and u.path is not None and u.path.exists():
                log = u.path.with_name(u.path.stem + ".torch.log")
                if not log.exists():
                    log.write_text(text)

    def status(self) -> dict[str, Any]:
        return {"cases": self.cases, "seconds": self.seconds, "findings": self.findings, "unique": len(self.unique),
                "bugs": self.filer.bugs(), "queued": self.filer.queued(),
                "crashes": self.crashes, "hangs": self.hangs, "nodes": dict(self.nodes)}

    def triage_poll(self) -> None:
        """Take finished minimizations from the queue and re-file their buckets (non-blocking)."""
        for key in self.filer.poll():
            self._forget_known(key)
        self._file_suspects()

    def triage_drain(self, grace: float = 60.0) -> None:
        """Wait at most `grace` s for the queue; what is left stays under its cheap key, `unminimized`."""
        for key in self.filer.drain(grace):
            self._forget_known(key)
        self._settle_suspects()

    def _forget_known(self, key: str) -> None:
        """A bucket turned out to be a known issue once explained: its findings count as known."""
        for ident, u in list(self.unique.items()):
            if u.bucket == key:
                self.known_hits[key] += u.count
                self.known_by_identity[ident] = key
                del self.unique[ident]

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
            "backends": list(cfg.spec.backends),
            "cross_device": cfg.spec.cross_device,
            "seed": cfg.seed,
            "families": list(cfg.families),
            "workers": cfg.workers,
            "budget_seconds": cfg.budget,
            "seconds": round(self.seconds, 3),
            "startup_seconds": round(self.startup_seconds, 3),
            "cases": self.cases,
            "replayed_from_database": self.replayed,
            "shard": list(getattr(cfg, "shard", (1, 1))),
            "nodes": dict(self.nodes),
            "cases_per_second": round(self.cases / seconds, 3),
            "findings": self.findings,
            "unique": len(self.unique) + len(self.previous),
            "known": sum(self.known_hits.values()),
            "known_signatures": dict(self.known_hits),
            "by_oracle": dict(self.by_oracle),
            "by_kind": dict(self.by_kind),
            "crashes": self.crashes,
            "hangs": self.hangs,
            "eager_errors": self.eager_errors,
            "skipped": dict(self.skipped),
            "valid_fraction": round(1 - self.eager_errors / n, 4),
            "features": dict(sorted(self.features.items())),
            "torch_seconds": round(self.torch_seconds, 3),
            "overhead_fraction": round(1 - self.torch_seconds / (seconds * workers), 4),
            "mean_timings": {k: round(v / n, 5) for k, v in sorted(self.timing_sums.items())},
            "by_layer": dict(self.by_layer),
            "layers": layer_summary(self.timing_sums, self.cases, self.by_layer),
            "reference": {"enabled": cfg.spec.reference, "guards": cfg.spec.guards, **dict(self.reference),
                          "unsupported_constructs": dict(self.unsupported_constructs)},
            **self._coverage_blocks(),
            "behaviours": self.behaviour_log.summary(),
            "torch_observers": observer_record(self.behaviour_log.observers),
            "unique_findings": [
                {"signature": u.finding.signature, "oracle": u.finding.oracle, "kind": u.finding.kind,
                 "severity": u.finding.severity, "message": u.finding.message, "count": u.count,
                 "seed": u.seed, "file": str(u.path) if u.path else None, "bucket": u.bucket,
                 "layer": u.finding.layer, "cheap_key": u.cheap_key}
                for u in self.unique_rows()
            ] + list(self.previous.values()),
            "bugs": self.filer.bugs(),
            "refusals": self.filer.in_tier("refusal"),
            "performance": self.filer.in_tier("performance"),
            "buckets": [b.summary() for b in self.filer.rows()],
            "internal_errors": self.filer.internal(),
            "harness_errors": self.harness_errors.summary(),
            "resumed": self.resumed,
            "resume": self.resume_block(),
            "stopped_by": getattr(self, "stopped_by", None),  # SIGTERM/SIGINT: ended early, results kept
            "unfinished": getattr(self, "unfinished", 0),  # running at budget end + grace: abandoned, not counted
            "worker_recycles": getattr(self, "worker_recycles", 0),  # Note [Workers are recycled] (run/workers.py)
            "triage_recycles": self.filer.queue.recycled if self.filer.queue is not None else 0,
            "harness_error_records": self.harness_errors.rows,
        }

    def _coverage_blocks(self) -> dict[str, Any]:
        """summary.json's `coverage` block (with --coverage) and `guided` block (with --guided)."""
        out: dict[str, Any] = {}
        if self.coverage_report is not None:
            out["coverage"] = summary_block(self.coverage_report, {"lines_traced": self.tracker.total,
                                                                   "merge_seconds": round(self.coverage_seconds, 3)})
        elif self.tracker is not None:
            out["coverage"] = {"lines_traced": self.tracker.total}
        if self.guide is not None:
            out["guided"] = self.guide.summary()
        return out

    def resume_block(self) -> dict[str, Any] | None:
        """Where the seed stream stands, for `--resume` (the campaign loop provides it)."""
        return None

    def write_summary(self) -> dict[str, Any]:
        summary = self.summary()
        path = self.config.out / "summary.json"
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(summary, indent=2) + "\n")
        tmp.replace(path)
        return summary




def _severity(f: Finding) -> int:
    return SEVERITY.get(f.severity, 0)
