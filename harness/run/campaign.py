"""Fuzz campaigns: draw cases, run them in workers, deduplicate findings, save repros, summarise.

Every unique finding is written to `OUT/findings/<signature>.py` before the
next case is dispatched; `OUT/summary.json` is rewritten at the end (and
every few seconds while running, so a killed campaign still leaves one).
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dynfuzz.generators.case import Case, case_seed, draw_case
from dynfuzz.report.plot import write_progress_svg
from dynfuzz.run.compilers import CompileSpec, make_compiler
from dynfuzz.run.ledger import Ledger, Unique  # noqa: F401  (Unique: re-exported for callers)
from dynfuzz.run.progress import Reporter
from dynfuzz.triage.known import KnownIssues


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


class Campaign(Ledger):
    def __init__(self, config: CampaignConfig) -> None:
        self.inflight_dir = config.out / "inflight"
        Ledger.__init__(self, config)
        self.next_index = 0
        self.prefetched: Case | None = None
        self.samples: list[tuple[float, int, int]] = []  # (seconds, cases, unique) for the progress chart
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
