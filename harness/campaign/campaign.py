"""Fuzz campaigns: draw cases, run them in workers, triage what they find, summarise.

The loop schedules cases onto local workers or Ray actors and lends workers to triage while findings wait
(Note [Capacity follows the queue] in campaign/capacity.py); the ledger (campaign/ledger.py) counts and files
every finding, into `OUT/findings/<slug>-<id>/` (one folder per root-cause bucket), before the next case is
dispatched;
`OUT/summary.json` is rewritten every few seconds and at the end, so a killed campaign still leaves one, and
its triage queue stays on disk (`OUT/queue/`) for `dynfuzz triage`.
"""
from __future__ import annotations

import os
import signal
import threading
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from dynfuzz.campaign.behaviour_log import BehaviourLog
from dynfuzz.campaign.capacity import Capacity, drain_grace
from dynfuzz.campaign.config import CampaignConfig
from dynfuzz.campaign.journal import Journal, has_journal, last, read_journal
from dynfuzz.campaign.journal_views import LARGE_PROCESS_FIELDS, compose, counts_of, replay, settings_of, write_summary
from dynfuzz.campaign.ledger import Ledger, Unique  # noqa: F401  (Unique: re-exported for callers)
from dynfuzz.campaign.line_coverage import Collector, Tracker
from dynfuzz.campaign.progress import Reporter
from dynfuzz.campaign.resume import ResumeState
from dynfuzz.generators.case import Case, case_seed, draw_case
from dynfuzz.report import write_campaign_report
from dynfuzz.report.plot import write_progress_svg
from dynfuzz.run.compilers import make_compiler
from dynfuzz.run.torch_observers import record as observer_record
from dynfuzz.triage.pending import NEW, SUSPECT
from dynfuzz.triage.queue import TriagePool, triage_lanes
from hypothesis.errors import StopTest

END_GRACE = 10.0  # seconds running cases get to finish after the budget is spent or a stop is asked for
END_LIMIT = 60.0  # `fuzz` ends at most this long after its budget: cases' END_GRACE and the triage drain together
# kept from the drain for what follows it: stopping the triage processes, the final summary, report and plot
# (a 20-minute 2.5.1 campaign took 10 s there and ended 74 s after its budget)
END_RESERVE = 15.0
# Note [Progress is journaled by the second]
# The counts and the stream position (a `progress` fact, and summary.json made from the journal) are rewritten
# at most once a second while cases finish, and every 10 s otherwise. Once a case was too often: a campaign of
# fast cases (13 a second, `--compiler identity`) fsynced an 11 KB fact and rewrote a 60 KB summary.json after
# each, in the loop that hands out the next case, and ran at 0.82x the cases per second of the landing before
# the journal, with a journal of 13 MB a minute. A finding is journaled when it is found, whatever the clock;
# a case that ended after the last progress fact runs again on `--resume`, and its findings, journaled but not
# yet confirmed by a progress fact, are matched rather than counted twice (`Ledger.unconfirmed`).
PROGRESS_EVERY = 1.0


class Campaign:
    """A campaign: the seed stream, the case workers, the triage lanes and coverage, around one `Ledger` that
    counts and files (`self.ledger`)."""

    def __init__(self, config: CampaignConfig) -> None:
        self.config = config
        self.inflight_dir = config.out / "inflight"
        self.ledger = Ledger(config)
        self.next_index = 0
        self.prefetched: Case | None = None
        self.samples: list[tuple[float, int, int]] = []  # (seconds, cases, unique) for the progress chart
        self.to_replay: list[Case] = []
        self.to_confirm: list[tuple[Case, dict[str, Any]]] = []  # crashed a worker once: run again to confirm
        self.stopped_by: str | None = None  # SIGTERM / SIGINT when the campaign was stopped before its budget
        self.finishing = False  # writing the final views: a signal no longer interrupts
        self.ending_since: float | None = None  # when the budget ran out or a stop was asked for
        self.unfinished = 0  # cases still running END_GRACE s after the end, abandoned
        self.open_indices: dict[int, int] = {}  # seed -> stream index, drawn and not yet finished (Note below)
        self.rerun: list[int] = []  # --resume: stream indices open when the previous parent died
        self.previous_seconds = 0.0  # --resume: the wall time of the runs before this one
        self.resumed: dict[str, Any] | None = None
        self.startup_seconds = 0.0
        self.replayed = 0
        self.nodes: Counter[str] = Counter()  # cases per cluster node (with --ray)
        self.worker_recycles = 0
        self.findings_db = None
        self.triage: Any = None  # the TriagePool, while the campaign runs one
        self.capacity = Capacity(max(config.workers, 1), lanes=triage_lanes(max(config.workers, 1)))
        coverage = getattr(config, "coverage", None)
        self.tracker = Tracker(coverage) if coverage is not None else None
        self.collector: Collector | None = None
        self.guide = None  # a run.guided.Guide when the campaign is guided (--guided)
        self.swarm = None  # a run.swarm_weights.Swarm with --swarm
        self.behaviour_log = BehaviourLog()  # what Dynamo did, case by case (campaign/behaviour_log.py)
        self.coverage_report: dict[str, Any] | None = None
        self.coverage_seconds = 0.0
        self.jobs_waiting: list[Any] = []  # triage jobs restored by --resume, handed to the lanes at the start
        self.last_progress = 0.0  # when the last `progress` fact with the large process blocks was journaled
        self.journal = Journal(config.out)  # Note [The journal is the campaign] (campaign/journal.py)
        self.earlier_facts: list[dict[str, Any]] = []  # --resume: the facts of the earlier runs views are made of
        if config.resume is not None:  # Note [Resuming a campaign] in campaign/resume.py
            self._take_over(config.resume)
        self.ledger.journal = self.journal
        if config.database is not None and config.resume is None:
            from dynfuzz.campaign.exampledb import FindingsDB

            self.findings_db = FindingsDB.at(config.database, config.families, config.db_expire_days)
            self.to_replay = self.findings_db.replay_cases()
            self.ledger.on_new_finding = self.findings_db.save
        if config.guided:
            from dynfuzz.campaign.guided import Guide

            self.guide = Guide(config.seed, config.families, config.out)
        if getattr(config, "swarm", False):
            from dynfuzz.campaign.swarm_weights import Swarm

            saved = config.resume.summary.get("swarm_state") if config.resume is not None else None
            self.swarm = Swarm(config.families, config.out, saved=saved)
        self._journal_start()

    def _take_over(self, state: ResumeState) -> None:
        """--resume: everything the earlier runs journaled, replayed into this campaign's ledger (the views they
        left are rewritten from it); an earlier layout without a journal is read from its summary.json."""
        if has_journal(self.config.out):
            facts = read_journal(self.config.out)
            self.jobs_waiting = replay(self.ledger, facts, triaging=self.config.minimize_budget is not None)
            kept = ("triage-run", "release", "settings", "resume", "pool")
            self.earlier_facts = [r for r in facts if r["fact"] in kept]
            process = (last(facts, "progress") or {}).get("process", {})
            self.replayed = int(process.get("replayed_from_database") or 0)
        else:
            from dynfuzz.campaign.campaign_state import restore

            self.jobs_waiting = restore(self.ledger, state.summary, self.config.out)
            self.replayed = int(state.summary.get("replayed_from_database") or 0)
        self.previous_seconds = self.ledger.seconds
        self.next_index, self.rerun = state.next_index, list(state.open_indices)
        self.resumed = {"from_next_index": state.next_index, "rerun": len(state.open_indices),
                        "previous_cases": self.ledger.cases, "previous_seconds": round(self.previous_seconds, 3)}

    def _journal_start(self) -> None:
        """The run's first fact: the settings of a new campaign, or a resume (the budget the campaign has now)."""

        cfg = self.config
        if cfg.resume is not None and has_journal(cfg.out):
            total = round(self.previous_seconds + cfg.budget, 3)
            self.journal.append("resume", settings={"budget_seconds": total, "max_cases": cfg.max_cases},
                                from_next_index=self.next_index, rerun=list(self.rerun))
            self.earlier_facts.append({"fact": "resume", "settings": {"budget_seconds": total,
                                                                      "max_cases": cfg.max_cases}})
            return
        settings = {**settings_of(self.summary(), cfg.spec), "flags": dict(cfg.flags)}
        if cfg.resume is not None:  # an earlier layout's folder: its settings as it recorded them
            settings.update({k: cfg.resume.summary[k] for k in ("budget_seconds", "workers") if k in cfg.resume.summary})
        self.journal.append("settings", settings=settings)
        self.earlier_facts = [{"fact": "settings", "settings": settings}]

    # ---- the loop ----
    def run(self) -> dict[str, Any]:
        """The campaign, with SIGTERM and Ctrl-C handled to its very end (the drain and the final views too)."""
        with self._stop_on_signals():
            return self._run()

    def _run(self) -> dict[str, Any]:
        cfg = self.config
        self.ledger.findings_dir.mkdir(parents=True, exist_ok=True)
        self.inflight_dir.mkdir(parents=True, exist_ok=True)
        if cfg.coverage is not None and cfg.resume is None:
            cfg.coverage.clear()  # a new campaign in an old --out: its coverage is not this one's
        from dynfuzz.run.isolation import campaign_compile_cache

        remove_compile_cache = campaign_compile_cache(cfg.out)  # before any worker starts: they inherit it
        if cfg.minimize_budget:
            self.triage = TriagePool(cfg.spec, cfg.minimize_budget, triage_lanes(cfg.workers),
                                     log_dir=cfg.out / "workers")
            self.ledger.triage = self.triage
            for job in self.jobs_waiting:  # --resume: what the earlier run left waiting
                self.triage.submit(job.ident, job.case, job.finding, job.meta, job.priority)
        t0 = time.monotonic()
        pool = None
        if cfg.ray is not None:
            from dynfuzz.campaign.cluster import RayPool

            pool = RayPool(cfg.spec, cfg.case_timeout, address=cfg.ray)
            cfg.workers, self.nodes = pool.size, pool.nodes  # one actor per core; the pool counts per node
            self.journal.append("pool", settings={"workers": pool.size})
            self.earlier_facts.append({"fact": "pool", "settings": {"workers": pool.size}})
            compiler = None
        elif cfg.workers > 0:
            from dynfuzz.campaign.workers import Pool, WorkerLimits

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
        last_summary, moved = start, False
        try:
            with reporter:
                while True:
                    now = time.monotonic()
                    out_of_cases = self._cases_exhausted() and self.prefetched is None and not self.rerun
                    if pool is None:
                        if now >= deadline or out_of_cases or self.stopped_by:
                            break
                        self._run_inline(compiler)
                        moved = True
                    else:
                        open_for_new = not (now >= deadline or out_of_cases or self.stopped_by)
                        allowed = self._balance(now - start, deadline - now, open_for_new, cfg.ray is None)
                        if open_for_new or (self.to_confirm and not self.stopped_by):
                            for slot in pool.idle():
                                if len(pool.busy()) >= allowed and not self.to_confirm:
                                    break
                                case, info = self._take_next(open_for_new)
                                if case is None:
                                    break
                                self._write_inflight(slot.index, case)
                                pool.submit(slot, case, {**info, "slot": slot.index})
                        if not pool.busy() and not (open_for_new and allowed < pool_size(pool)):
                            break
                        if self._past_end_grace(deadline, pool):
                            break
                        if self.prefetched is None and time.monotonic() < deadline and not self.stopped_by:
                            self.prefetched = self._next_case()  # overlaps generation with the workers
                        for case, info, status, payload in pool.collect(max_wait=0.5):
                            self._collected(case, info, status, payload)
                            moved = True
                            (self.inflight_dir / f"w{info['slot']}.py").unlink(missing_ok=True)
                    self.ledger.seconds = self.previous_seconds + time.monotonic() - start
                    self.triage_poll()
                    self._sample()
                    reporter.update(self.status())
                    since = time.monotonic() - last_summary
                    if since > 10 or moved and since > PROGRESS_EVERY:  # Note [Progress is journaled by the second]
                        self.write_summary()
                        last_summary, moved = time.monotonic(), False
        except KeyboardInterrupt:  # a second Ctrl-C while finishing: stop now, still write what ran
            self.stopped_by = self.stopped_by or "SIGINT"
        finally:
            if pool is not None:
                self.worker_recycles = getattr(pool, "recycled", 0)
                pool.close()
            for case, info in self.to_confirm:  # no chance to re-run them: filed unconfirmed
                self._finish_guarded(case, "crash", {"exitcode": info["confirm"], "log": info.get("worker_log")})
            self.to_confirm.clear()
            if self.findings_db is not None:
                self.findings_db.flush(force=True)  # what an outage kept back (Note [The database is a cache])
        try:
            self.triage_drain(self._drain_grace(start))
        except KeyboardInterrupt:  # asked twice while draining: the jobs left stay queued
            self.stopped_by = self.stopped_by or "SIGINT"
        finally:
            remove_compile_cache()  # after the drain: the triage processes compile with it until they stop
        self.finishing = True  # a signal now only records itself: the final views are written whatever comes
        self.ledger.seconds = self.previous_seconds + time.monotonic() - start
        if cfg.coverage is not None:
            self._finish_coverage()
        self._sample(force=True)
        self.journal.append("stop", stopped_by=self.stopped_by, unfinished=self.unfinished)
        summary = self.write_summary(final=True)
        write_progress_svg(cfg.out / "progress.svg", self.samples,
                           f"dynfuzz {cfg.spec.describe()}: {self.ledger.cases} cases, "
                           f"{len(self.ledger.unique)} unique findings")
        write_campaign_report(cfg.out, self.samples)
        reporter.final(summary, self.ledger.unique_rows())
        if self.coverage_report is not None:
            from dynfuzz.campaign.line_coverage_report import format_table

            reporter.print_text(format_table(self.coverage_report))
        return summary

    def _drain_grace(self, start: float) -> float:
        """How long triage may still run after the cases: none after a stop (SIGTERM: the jobs stay queued for
        `dynfuzz triage`); else `drain_grace` (10% of the budget, 10 s to 60 s, or the rest of the budget for a run
        its `--cases` ended), cut so that `fuzz` ends at most END_LIMIT s after its budget (a campaign given its
        own grace, the gate, keeps it)."""
        cfg = self.config
        if self.stopped_by:
            return 0.0
        now = time.monotonic()
        ended_by_cases = self._cases_exhausted() and not self.rerun
        grace = drain_grace(cfg.budget, cfg.triage_grace, start + cfg.budget - now, ended_by_cases)
        if cfg.triage_grace is not None and not ended_by_cases:
            return grace
        hard_end = start - self.startup_seconds + cfg.budget + END_LIMIT - END_RESERVE
        return max(0.0, min(grace, hard_end - now))

    # ---- triage: the lanes, their share of the workers, their results ----
    def _balance(self, elapsed: float, remaining: float, open_for_new: bool, local: bool) -> int:
        """How many case workers may run now; the rest of the campaign's processes triage (Note [Capacity
        follows the queue])."""
        workers = max(self.config.workers, 1)
        if self.triage is None or not local:
            return workers
        urgent = self.triage.waiting_count(NEW) + self.triage.waiting_count(SUSPECT)
        converted = self.capacity.converted(elapsed, remaining, urgent, self.triage.mean_job_seconds(),
                                            open_for_new, self.triage.waiting_bugs())
        self.triage.resize(triage_lanes(workers) + converted)
        return workers - converted

    def triage_poll(self) -> None:
        """Apply finished triage jobs to the ledger (non-blocking)."""
        if self.triage is not None:
            for ident, status, payload in self.triage.poll():
                self._apply_guarded(ident, status, payload)
                if self.swarm is not None:
                    self.swarm.learn(self.ledger.filer.buckets.values())

    def _apply_guarded(self, ident: str, status: str, payload: Any) -> None:
        """A triage result into the ledger; a dynfuzz failure while applying it (a bucket folder moved away, say)
        is an internal harness error, never the end of the campaign: the result is in the journal already, and
        the views made from it (`dynfuzz report DIR`) apply it again."""
        from dynfuzz.run.harness_errors import HarnessError

        try:
            self.ledger.apply_triage(ident, status, payload)
        except Exception as e:  # noqa: BLE001  (any failure of ours; the campaign goes on)
            self.ledger.harness_error(Case(source="", seed=getattr(getattr(payload, "case", None), "seed", None)),
                                      HarnessError.from_exception(e))

    def triage_drain(self, grace: float = 60.0) -> None:
        """Triage on every process for at most `grace` s; what is left stays on disk for `dynfuzz triage`,
        its buckets `unminimized`, and suspects are filed under their cheap keys."""
        if self.triage is not None:
            self.triage.resize(max(self.config.workers, 1) + triage_lanes(self.config.workers))
            self.journal.append("drain", grace=round(grace, 3), waiting=len(self.triage))
            deadline = time.monotonic() + grace
            try:
                while len(self.triage) and time.monotonic() < deadline and not self.stopped_by:
                    for ident, status, payload in self.triage.poll(wait=min(0.2, max(deadline - time.monotonic(),
                                                                                     0.0))):
                        self._apply_guarded(ident, status, payload)
            finally:
                results, left = self.triage.drain(time.monotonic())  # stops the lanes; what runs stays queued
            for ident, status, payload in results:
                self._apply_guarded(ident, status, payload)
            self.triage_left = len(left)
            self.triage_recycles = self.triage.recycled
            self.triage_jobs = list(self.triage.job_seconds)
            self.triage.close()
        self.ledger.settle()

    def _finish_coverage(self) -> None:
        """Stop in-process measurement, merge the workers' data, write OUT/coverage.json."""
        from dynfuzz.campaign.line_coverage_report import finish

        if self.collector is not None:
            self.collector.save()
        t = time.monotonic()
        self.coverage_report = finish(self.config.coverage, self.tracker, self.config.out,
                                      self.collector.late if self.collector is not None else ())
        self.coverage_seconds = time.monotonic() - t

    def _sample(self, force: bool = False) -> None:
        """Record a point for the progress chart when the counts moved (at most ~500 points a run)."""
        point = (round(self.ledger.seconds - self.previous_seconds, 2), self.ledger.cases, len(self.ledger.unique))
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
            if self.stopped_by and not self.finishing:  # asked twice: stop waiting for running cases
                raise KeyboardInterrupt
            self.stopped_by = self.stopped_by or signal.Signals(signum).name

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
            self.ledger.harness_error(case, HarnessError(
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
            self._observe(case, status, payload)
            self.ledger._finish(case, status, payload)
        except Exception as e:
            self.ledger.harness_error(case, HarnessError.from_exception(e))

    def _observe(self, case: Case, status: str, payload: Any) -> None:
        """What the campaign's own processes take from a finished case: its new lines (coverage) and new
        behaviours, which guidance rewards."""
        new_lines = novelty = None
        if self.tracker is not None:
            new_lines = self.tracker.add(payload.coverage if status == "done" else None)
        if status == "done":
            novelty = self.behaviour_log.add(payload.behaviours, self.ledger.seconds, payload.observers)
        if self.guide is not None:
            self.guide.observe(case, novelty, new_lines)

    def _take_prefetched(self) -> Case | None:
        """The drawn-ahead case, or a fresh one; None once `--cases` is exhausted."""
        case, self.prefetched = self.prefetched, None
        if case is not None:
            return case
        if self._cases_exhausted():
            return None
        return self._next_case()

    def _cases_exhausted(self) -> bool:
        """`--cases N` drawn: N counts the database replays too, which take no index of the seed stream."""
        return self.config.max_cases is not None and self.next_index + self.replayed >= self.config.max_cases

    def _next_case(self) -> Case | None:
        """The next case of the stream (database replays first); None once `--cases` is exhausted.

        A seed whose drawing raises is filed as a `generator` harness error and skipped."""
        while True:
            if self.rerun:
                index = self.rerun.pop(0)
            elif self._cases_exhausted():
                return None
            elif self.to_replay:  # a replay is no index of the stream: every index's seed is drawn
                self.replayed += 1
                return self.to_replay.pop(0)
            else:
                index = self.next_index
                self.next_index += 1
            seed = case_seed(self.config.seed, index, self.config.shard)
            self.open_indices[seed] = index
            if self.config.ray is not None and self.guide is None and self.swarm is None:  # actors draw it (cluster.py)
                return Case(source="", seed=seed, families=self.config.families)
            t = time.perf_counter()
            try:
                if self.guide is not None:
                    return self.guide.next_case(index)
                if self.swarm is not None:
                    return self.swarm.next_case(seed)
                return draw_case(seed, self.config.families)
            except (Exception, StopTest) as e:  # a generator bug costs this seed, never the campaign
                from dynfuzz.run.harness_errors import HarnessError

                self.open_indices.pop(seed, None)
                self.ledger.harness_error(Case(source="", seed=seed, families=self.config.families),
                                          HarnessError.from_exception(e, "generator"))
            finally:
                self.ledger.timing_sums["generation"] += time.perf_counter() - t

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

    # ---- reading ----
    def status(self) -> dict[str, Any]:
        ledger = self.ledger
        return {"cases": ledger.cases, "seconds": ledger.seconds, "findings": ledger.findings,
                "unique": len(ledger.unique), "bugs": ledger.filer.bugs(),
                "queued": len(self.triage) if self.triage is not None else 0,
                "crashes": ledger.crashes, "hangs": ledger.hangs, "nodes": dict(self.nodes)}

    def summary(self) -> dict[str, Any]:
        """`summary.json`: the ledger's counts, and the settings and processes of this campaign."""
        from dynfuzz.campaign.resume import current_environment

        cfg = self.config
        jobs = getattr(self, "triage_jobs", None) or (self.triage.job_seconds if self.triage is not None else [])
        return {
            **self.ledger.summary(),
            "startup_seconds": round(self.startup_seconds, 3),
            "replayed_from_database": self.replayed,
            "shard": list(getattr(cfg, "shard", (1, 1))),
            "nodes": dict(self.nodes),
            "max_cases": cfg.max_cases,
            "known_file": str(Path(cfg.known.path).resolve()) if cfg.known.path is not None else None,
            "mutants": sorted(m for m in os.environ.get("DYNFUZZ_MUTANTS", "").split(",") if m),
            "disabled_constructs": current_environment()["disabled_constructs"],
            **self._coverage_blocks(),
            "behaviours": self.behaviour_log.summary(),
            "torch_observers": observer_record(self.behaviour_log.observers),
            "triage": {"minimize_budget": cfg.minimize_budget, "jobs": len(jobs),
                       "left": getattr(self, "triage_left", None),
                       "job_seconds_median": round(_quantile(jobs, 0.5), 3) if jobs else None,
                       "job_seconds_p90": round(_quantile(jobs, 0.9), 3) if jobs else None,
                       "converted_worker_seconds": round(self.capacity.used, 3)},
            "resumed": self.resumed,
            "resume": self.resume_block(),
            "stopped_by": self.stopped_by,  # SIGTERM/SIGINT: ended early, results kept
            "unfinished": self.unfinished,  # running at budget end + grace: abandoned, not counted
            "worker_recycles": self.worker_recycles,  # Note [Workers are recycled] (campaign/workers.py)
            "triage_recycles": getattr(self, "triage_recycles", 0),
        }

    def _coverage_blocks(self) -> dict[str, Any]:
        """summary.json's `coverage` block (with --coverage) and `guided` block (with --guided)."""
        from dynfuzz.campaign.line_coverage_report import summary_block

        out: dict[str, Any] = {}
        if self.coverage_report is not None:
            out["coverage"] = summary_block(self.coverage_report, {"lines_traced": self.tracker.total,
                                                                   "merge_seconds": round(self.coverage_seconds, 3)})
        elif self.tracker is not None:
            out["coverage"] = {"lines_traced": self.tracker.total}
        if self.guide is not None:
            out["guided"] = self.guide.summary()
        out["swarm"] = self.swarm is not None
        if self.swarm is not None:
            out["swarm_state"] = self.swarm.summary()
        return out

    def write_summary(self, final: bool = False) -> dict[str, Any]:
        """Journal the counts (a `progress` fact: the large process blocks, behaviours and coverage, at most every
        10 s unless `final`), then write summary.json, the view of the journal's settings and this ledger."""

        live = self.summary()
        ledger_keys = set(self.ledger.summary())
        process = {k: v for k, v in live.items() if k not in ledger_keys}
        journaled = process
        if not final and time.monotonic() - self.last_progress < 10.0:
            journaled = {k: v for k, v in process.items() if k not in LARGE_PROCESS_FIELDS}
        else:
            self.last_progress = time.monotonic()
        self.journal.append("progress", counts=counts_of(self.ledger), process=journaled)
        summary = compose(self.ledger, self.earlier_facts, self.config.out, process=process)
        write_summary(self.config.out, summary)
        return summary


def pool_size(pool: Any) -> int:
    return len(pool.idle()) + len(pool.busy())


def _quantile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * len(ordered) + 0.5) - 1))]
