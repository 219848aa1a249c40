"""Fuzz campaigns: draw cases, run them in workers, deduplicate findings, save repros, summarise.

Every unique finding is written to `OUT/findings/<signature>.py` before the
next case is dispatched; `OUT/summary.json` is rewritten at the end (and
every few seconds while running, so a killed campaign still leaves one).
"""
from __future__ import annotations

import json
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dynfuzz.generators.case import Case, case_seed, draw_case
from dynfuzz.oracles import Finding, finding
from dynfuzz.report.plot import write_progress_svg
from dynfuzz.run.compilers import CompileSpec, make_compiler
from dynfuzz.run.progress import Reporter
from dynfuzz.triage.known import KnownIssues
from dynfuzz.triage.repro import torch_version, write_finding


@dataclass
class CampaignConfig:
    budget: float
    out: Path
    seed: int = 0
    spec: CompileSpec = field(default_factory=CompileSpec)
    families: tuple[str, ...] = ()
    workers: int = 1  # 0 runs cases in this process (no crash isolation; for benchmarks and tests)
    max_cases: int | None = None
    case_timeout: float = 300.0
    known: KnownIssues = field(default_factory=KnownIssues)
    progress: bool | None = None  # None: live display only on a terminal
    database: Path | None = None  # Hypothesis example database: findings' choices saved, replayed first


@dataclass
class Unique:
    finding: Finding
    path: Path | None
    seed: int | None
    count: int = 1


class Campaign:
    def __init__(self, config: CampaignConfig) -> None:
        self.config = config
        self.findings_dir = config.out / "findings"
        self.inflight_dir = config.out / "inflight"
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
        self.next_index = 0
        self.prefetched: Case | None = None
        self.replayed = 0
        self.samples: list[tuple[float, int, int]] = []  # (seconds, cases, unique) for the progress chart
        self.findings_db = None
        self.to_replay: list[Case] = []
        if config.database is not None:
            from dynfuzz.run.exampledb import FindingsDB

            self.findings_db = FindingsDB.at(config.database, config.families)
            self.to_replay = self.findings_db.replay_cases()

    # ---- the loop ----
    def run(self) -> dict[str, Any]:
        cfg = self.config
        self.findings_dir.mkdir(parents=True, exist_ok=True)
        self.inflight_dir.mkdir(parents=True, exist_ok=True)
        t0 = time.monotonic()
        pool = None
        if cfg.workers > 0:
            from dynfuzz.run.workers import Pool

            pool = Pool(cfg.workers, cfg.spec, cfg.case_timeout)
            compiler = None
        else:
            compiler = make_compiler(cfg.spec)
        self.startup_seconds = time.monotonic() - t0
        start = time.monotonic()
        deadline = start + cfg.budget
        reporter = Reporter(cfg.progress, cfg.budget)
        last_summary = start
        try:
            with reporter:
                while True:
                    now = time.monotonic()
                    out_of_cases = (cfg.max_cases is not None and self.next_index >= cfg.max_cases
                                    and self.prefetched is None)
                    if pool is None:
                        if now >= deadline or out_of_cases:
                            break
                        self._run_inline(compiler)
                    else:
                        if not (now >= deadline or out_of_cases):
                            for slot in pool.idle():
                                case = self._take_prefetched()
                                if case is None:
                                    break
                                self._write_inflight(slot.index, case)
                                pool.submit(slot, case, {"slot": slot.index})
                        if not pool.busy():
                            break
                        if self.prefetched is None and time.monotonic() < deadline:
                            self.prefetched = self._next_case()  # overlaps generation with the workers
                        for case, info, status, payload in pool.collect(max_wait=0.5):
                            self._finish(case, status, payload)
                            (self.inflight_dir / f"w{info['slot']}.py").unlink(missing_ok=True)
                    self.seconds = time.monotonic() - start
                    self._sample()
                    reporter.update(self.status())
                    if time.monotonic() - last_summary > 10:
                        self.write_summary()
                        last_summary = time.monotonic()
        finally:
            if pool is not None:
                pool.close()
        self.seconds = time.monotonic() - start
        self._sample(force=True)
        summary = self.write_summary()
        write_progress_svg(cfg.out / "progress.svg", self.samples,
                           f"dynfuzz {cfg.spec.describe()}: {self.cases} cases, {len(self.unique)} unique findings")
        reporter.final(summary, self.unique_rows())
        return summary

    def _sample(self, force: bool = False) -> None:
        """Record a point for the progress chart when the counts moved (at most ~500 points a run)."""
        point = (round(self.seconds, 2), self.cases, len(self.unique))
        last = self.samples[-1] if self.samples else None
        spaced = last is None or point[0] - last[0] >= self.config.budget / 500
        if force or (last is None or point[1:] != last[1:]) and spaced:
            self.samples.append(point)

    def _take_prefetched(self) -> Case | None:
        """The drawn-ahead case, or a fresh one; None once `--cases` is exhausted."""
        case, self.prefetched = self.prefetched, None
        if case is not None:
            return case
        if self.config.max_cases is not None and self.next_index >= self.config.max_cases:
            return None
        return self._next_case()

    def _next_case(self) -> Case | None:
        if self.config.max_cases is not None and self.next_index >= self.config.max_cases:
            return None
        if self.to_replay:
            self.next_index += 1
            self.replayed += 1
            return self.to_replay.pop(0)
        seed = case_seed(self.config.seed, self.next_index)
        self.next_index += 1
        t = time.perf_counter()
        case = draw_case(seed, self.config.families)
        self.timing_sums["generation"] += time.perf_counter() - t
        return case

    def _run_inline(self, compiler) -> None:
        from dynfuzz.run.judge import judge

        case = self._next_case()
        self._write_inflight(0, case)
        self._finish(case, "done", judge(case, compiler, self.config.spec))
        (self.inflight_dir / "w0.py").unlink(missing_ok=True)

    def _write_inflight(self, slot: int, case: Case) -> None:
        header = f"# in-flight case, seed {case.seed}, families {list(case.families)}\n"
        (self.inflight_dir / f"w{slot}.py").write_text(header + case.source)

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
    from dynfuzz.oracles.model import SEVERITY

    return SEVERITY.get(f.severity, 0)
