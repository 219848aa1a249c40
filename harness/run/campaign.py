"""Fuzz campaigns: draw cases, run them in workers, deduplicate findings, save repros, summarise.

Every unique finding is written to `OUT/findings/<signature>.py` before the
next case is dispatched; `OUT/summary.json` is rewritten at the end (and
every few seconds while running, so a killed campaign still leaves one).
"""
from __future__ import annotations

import signal
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dynfuzz.generators.case import Case, case_seed, draw_case
from dynfuzz.report import write_campaign_report
from dynfuzz.report.plot import write_progress_svg
from dynfuzz.run.compilers import CompileSpec, make_compiler
from dynfuzz.run.ledger import Ledger, Unique  # noqa: F401  (Unique: re-exported for callers)
from dynfuzz.run.line_coverage import Collector, CoverageSpec
from dynfuzz.run.progress import Reporter
from dynfuzz.run.resume import ResumeState
from dynfuzz.triage.known import KnownIssues
from hypothesis.errors import StopTest

END_GRACE = 10.0  # seconds running cases get to finish after the budget is spent or a stop is asked for


def triage_grace(budget: float) -> float:
    """How long minimization may delay the end of a campaign: 10% of its budget, between 10 s and 60 s.

    A one-hour soak ends at most 70 s late and a one-minute CI run 20 s late; buckets still queued
    then stay under their cheap key, `unminimized`."""
    return min(60.0, max(10.0, 0.1 * budget))


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
    database: Path | str | None = None  # Hypothesis example database (a directory or a redis:// URL): findings'
    # choices saved, replayed first
    db_expire_days: float = 30.0  # --db-expire: a Redis entry unused this long expires
    shard: tuple[int, int] = (1, 1)  # --shard I/N: this run draws every N-th seed of the stream, from the (I-1)-th
    ray: str | None = None  # --ray [ADDRESS]: workers are Ray actors on a cluster ("" starts a local one)
    coverage: CoverageSpec | None = None  # --coverage: line coverage of Dynamo per worker, OUT/coverage.json
    guided: bool = False  # --guided (needs coverage): fragment bandit and a pool of choice sequences
    resume: ResumeState | None = None  # --resume DIR: continue the campaign saved there (run/resume.py)
    worker_memory: int | None = None  # --worker-memory: RLIMIT_AS per worker process in bytes (None: no limit)
    minimize_budget: float | None = None  # --minimize-budget: seconds per new cheap key in the triage worker
    triage_grace: float | None = None  # the most the triage queue may delay the end (None: `triage_grace()`)


class Campaign(Ledger):
    def __init__(self, config: CampaignConfig) -> None:
        self.inflight_dir = config.out / "inflight"
        Ledger.__init__(self, config)
        self.next_index = 0
        self.prefetched: Case | None = None
        self.samples: list[tuple[float, int, int]] = []  # (seconds, cases, unique) for the progress chart
        self.to_replay: list[Case] = []
        self.to_confirm: list[tuple[Case, dict[str, Any]]] = []  # crashed a worker once: run again to confirm
        self.stopped_by: str | None = None  # SIGTERM / SIGINT when the campaign was stopped before its budget
        self.ending_since: float | None = None  # when the budget ran out or a stop was asked for
        self.unfinished = 0  # cases still running END_GRACE s after the end, abandoned
        self.open_indices: dict[int, int] = {}  # seed -> stream index, drawn and not yet finished (Note below)
        self.rerun: list[int] = []  # --resume: stream indices open when the previous parent died
        if config.resume is not None:  # Note [Resuming a campaign] in run/resume.py
            from dynfuzz.run.resume import restore

            restore(self, config.resume)
            self.next_index, self.rerun = config.resume.next_index, list(config.resume.open_indices)
        if config.database is not None and config.resume is None:
            from dynfuzz.run.exampledb import FindingsDB

            self.findings_db = FindingsDB.at(config.database, config.families, config.db_expire_days)
            self.to_replay = self.findings_db.replay_cases()
        self.collector: Collector | None = None
        if config.guided:
            from dynfuzz.run.guided import Guide

            self.guide = Guide(config.seed, config.families, config.out)

    # ---- the loop ----
    def run(self) -> dict[str, Any]:
        cfg = self.config
        self.findings_dir.mkdir(parents=True, exist_ok=True)
        self.inflight_dir.mkdir(parents=True, exist_ok=True)
        if cfg.coverage is not None:
            cfg.coverage.clear()  # a new campaign in an old --out: its coverage is not this one's
        from dynfuzz.run.isolation import campaign_compile_cache

        remove_compile_cache = campaign_compile_cache(cfg.out)  # before any worker starts: they inherit it
        if cfg.minimize_budget:
            from dynfuzz.triage.queue import triage_lanes

            self.filer.enable_queue(cfg.minimize_budget, triage_lanes(cfg.workers))
        t0 = time.monotonic()
        pool = None
        if cfg.ray is not None:
            from dynfuzz.run.cluster import RayPool

            pool = RayPool(cfg.spec, cfg.case_timeout, address=cfg.ray)
            cfg.workers, self.nodes = pool.size, pool.nodes  # one actor per core; the pool counts per node
            compiler = None
        elif cfg.workers > 0:
            from dynfuzz.run.workers import Pool, WorkerLimits

            (cfg.out / "workers").mkdir(exist_ok=True)
            pool = Pool(cfg.workers, cfg.spec, cfg.case_timeout, cfg.coverage,
                        limits=WorkerLimits(cfg.worker_memory, str(cfg.out / "workers")))
            compiler = None
        else:
            self.collector = Collector(cfg.coverage, "inline") if cfg.coverage is not None else None
            compiler = make_compiler(cfg.spec)
            if self.collector is not None:
                self.collector.new_lines()  # start-up lines: kept in the data file, credited to no case
        self.startup_seconds = time.monotonic() - t0
        start = time.monotonic()
        deadline = start + cfg.budget
        reporter = Reporter(cfg.progress, cfg.budget)
        last_summary = start
        try:
            with reporter, self._stop_on_signals():
                while True:
                    deadline = start + cfg.budget + cfg.known.verify_seconds  # verifying known issues is not budget
                    now = time.monotonic()
                    out_of_cases = (cfg.max_cases is not None and self.next_index >= cfg.max_cases
                                    and self.prefetched is None)
                    if pool is None:
                        if now >= deadline or out_of_cases or self.stopped_by:
                            break
                        self._run_inline(compiler)
                        last_summary = 0.0  # rewrite it now: --resume reads the stream position there
                    else:
                        open_for_new = not (now >= deadline or out_of_cases or self.stopped_by)
                        if open_for_new or (self.to_confirm and not self.stopped_by):
                            for slot in pool.idle():
                                case, info = self._take_next(open_for_new)
                                if case is None:
                                    break
                                self._write_inflight(slot.index, case)
                                pool.submit(slot, case, {**info, "slot": slot.index})
                        if not pool.busy():
                            break
                        if self._past_end_grace(deadline, pool):
                            break
                        if self.prefetched is None and time.monotonic() < deadline and not self.stopped_by:
                            self.prefetched = self._next_case()  # overlaps generation with the workers
                        for case, info, status, payload in pool.collect(max_wait=0.5):
                            self._collected(case, info, status, payload)
                            last_summary = 0.0  # rewrite it now: --resume reads the stream position there
                            (self.inflight_dir / f"w{info['slot']}.py").unlink(missing_ok=True)
                    self.seconds = time.monotonic() - start
                    self.triage_poll()
                    self._sample()
                    reporter.update(self.status())
                    if time.monotonic() - last_summary > 10:
                        self.write_summary()
                        last_summary = time.monotonic()
        except KeyboardInterrupt:  # a second Ctrl-C while finishing: stop now, still write what ran
            self.stopped_by = self.stopped_by or "SIGINT"
        finally:
            if pool is not None:
                self.worker_recycles = getattr(pool, "recycled", 0)
                pool.close()
            remove_compile_cache()
            for case, info in self.to_confirm:  # no chance to re-run them: filed unconfirmed
                self._finish_guarded(case, "crash", {"exitcode": info["confirm"], "log": info.get("worker_log")})
            self.to_confirm.clear()
            if self.findings_db is not None:
                self.findings_db.flush(force=True)  # what an outage kept back (Note [The database is a cache])
        self.triage_drain(cfg.triage_grace if cfg.triage_grace is not None else triage_grace(cfg.budget))
        self.seconds = time.monotonic() - start
        if cfg.coverage is not None:
            self._finish_coverage()
        self._sample(force=True)
        summary = self.write_summary()
        write_progress_svg(cfg.out / "progress.svg", self.samples,
                           f"dynfuzz {cfg.spec.describe()}: {self.cases} cases, {len(self.unique)} unique findings")
        write_campaign_report(cfg.out, self.samples)
        reporter.final(summary, self.unique_rows())
        if self.coverage_report is not None:
            from dynfuzz.run.line_coverage_report import format_table

            reporter.console.print(format_table(self.coverage_report), highlight=False, markup=False)
        return summary

    def _finish_coverage(self) -> None:
        """Stop in-process measurement, merge the workers' data, write OUT/coverage.json."""
        from dynfuzz.run.line_coverage_report import finish

        if self.collector is not None:
            self.collector.save()
        t = time.monotonic()
        self.coverage_report = finish(self.config.coverage, self.tracker, self.config.out,
                                      self.collector.late if self.collector is not None else ())
        self.coverage_seconds = time.monotonic() - t

    def _sample(self, force: bool = False) -> None:
        """Record a point for the progress chart when the counts moved (at most ~500 points a run)."""
        point = (round(self.seconds, 2), self.cases, len(self.unique))
        last = self.samples[-1] if self.samples else None
        spaced = last is None or point[0] - last[0] >= self.config.budget / 500
        if force or (last is None or point[1:] != last[1:]) and spaced:
            self.samples.append(point)

    @contextmanager
    def _stop_on_signals(self) -> Iterator[None]:
        """SIGTERM and the first Ctrl-C end the campaign cleanly: no new cases, running ones finish
        (or time out), then the summary, summary.json and the report are written for what ran. A
        cancelled CI job still leaves its results."""
        if threading.current_thread() is not threading.main_thread():
            yield
            return

        def stop(signum, frame):
            if self.stopped_by:  # asked twice: stop waiting for running cases
                raise KeyboardInterrupt
            self.stopped_by = signal.Signals(signum).name

        saved = {sig: signal.signal(sig, stop) for sig in (signal.SIGTERM, signal.SIGINT)}
        try:
            yield
        finally:
            for sig, handler in saved.items():
                signal.signal(sig, handler)

    def _past_end_grace(self, deadline: float, pool) -> bool:
        """True once the budget ran out (or a stop was asked for) more than END_GRACE s ago: the cases still
        running are abandoned (not findings: they did not time out; their in-flight files stay, and
        `--resume` runs them again) so a campaign ends within its budget plus a small grace."""
        now = time.monotonic()
        if now < deadline and not self.stopped_by:
            return False
        self.ending_since = self.ending_since or now
        if now - self.ending_since <= END_GRACE:
            return False
        self.unfinished = len(pool.busy())
        return True

    def resume_block(self) -> dict[str, Any]:
        """The stream position and the indices drawn but not finished (Note [Resuming a campaign])."""
        return {"next_index": self.next_index,
                "open_indices": sorted(set(self.open_indices.values()) | set(self.rerun))}

    def _take_next(self, new: bool = True) -> tuple[Case | None, dict[str, Any]]:
        """A case to confirm (it crashed a worker once) first, else (when `new`) the next one of the stream."""
        if self.to_confirm:
            return self.to_confirm.pop(0)
        return (self._take_prefetched() if new else None), {}

    def _collected(self, case: Case, info: dict[str, Any], status: str, payload: Any) -> None:
        """A finished case from the pool. A worker death is a `crash` only if the case kills a fresh worker
        too; otherwise the worker died of something else (the OOM killer, a signal from outside) and the
        case's second result stands, with a `worker-lost` harness error on file."""
        from dynfuzz.run.harness_errors import HarnessError

        if status == "crash" and "confirm" not in info:
            self.to_confirm.append((case, {"confirm": payload, "worker_log": info.get("worker_log", "")}))
            return
        if "confirm" in info and status != "crash":
            self.harness_error(case, HarnessError(
                "worker-lost", f"a worker died (exit code {info['confirm']}) running this case, but a fresh "
                               f"worker ran it to the end", info.get("worker_log", "")))
        if status == "crash":
            payload = {"exitcode": payload, "log": info.get("worker_log", "")}
        self._finish_guarded(case, status, payload)

    def _finish_guarded(self, case: Case, status: str, payload: Any) -> None:
        """`_finish`, but a dynfuzz bug while counting or filing becomes a harness error, not the end."""
        from dynfuzz.run.harness_errors import HarnessError

        self.open_indices.pop(case.seed, None)
        try:
            self._finish(case, status, payload)
        except Exception as e:
            self.harness_error(case, HarnessError.from_exception(e))

    def _take_prefetched(self) -> Case | None:
        """The drawn-ahead case, or a fresh one; None once `--cases` is exhausted."""
        case, self.prefetched = self.prefetched, None
        if case is not None:
            return case
        if self.config.max_cases is not None and self.next_index >= self.config.max_cases:
            return None
        return self._next_case()

    def _next_case(self) -> Case | None:
        """The next case of the stream (database replays first); None once `--cases` is exhausted.

        A seed whose drawing raises is filed as a `generator` harness error and skipped."""
        while True:
            if self.rerun:
                index = self.rerun.pop(0)
            elif self.config.max_cases is not None and self.next_index >= self.config.max_cases:
                return None
            elif self.to_replay:
                self.next_index += 1
                self.replayed += 1
                return self.to_replay.pop(0)
            else:
                index = self.next_index
                self.next_index += 1
            seed = case_seed(self.config.seed, index, self.config.shard)
            self.open_indices[seed] = index
            if self.config.ray is not None and self.guide is None:  # the actors draw it (Note in run/cluster.py)
                return Case(source="", seed=seed, families=self.config.families)
            t = time.perf_counter()
            try:
                if self.guide is not None:
                    return self.guide.next_case(index)
                return draw_case(seed, self.config.families)
            except (Exception, StopTest) as e:  # a generator bug costs this seed, never the campaign
                from dynfuzz.run.harness_errors import HarnessError

                self.open_indices.pop(seed, None)
                self.harness_error(Case(source="", seed=seed, families=self.config.families),
                                   HarnessError.from_exception(e, "generator"))
            finally:
                self.timing_sums["generation"] += time.perf_counter() - t

    def _run_inline(self, compiler) -> None:
        from dynfuzz.run.isolation import run_case

        case = self._next_case()
        if case is None:
            return
        self._write_inflight(0, case)
        status, result = run_case(case, compiler, self.config.spec)
        if status == "done" and self.collector is not None:
            result.coverage = self.collector.new_lines()
        self._finish_guarded(case, status, result)
        (self.inflight_dir / "w0.py").unlink(missing_ok=True)

    def _write_inflight(self, slot: int, case: Case) -> None:
        header = f"# in-flight case, seed {case.seed}, families {list(case.families)}\n"
        (self.inflight_dir / f"w{slot}.py").write_text(header + case.source)
