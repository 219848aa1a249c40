"""The minimization queue: one worker process that minimizes, explains and renders new findings.

A campaign hands each finding whose cheap key is new to `TriageQueue.submit` and goes on fuzzing; the
worker minimizes it (`--minimize-budget` seconds), explains it by ablation (a fixed number of judge
calls), renders the repro and runs it once in a subprocess. `poll` returns what finished; `drain`
waits for the rest until a deadline and then stops the worker, so the queue never delays the end of a
campaign by more than that. A worker that dies (torch can segfault while minimizing) is replaced and
its job reported as failed; the campaign keeps the finding under its cheap key.
"""
from __future__ import annotations

import dataclasses
import multiprocessing as mp
import os
import signal
import tempfile
import time
from dataclasses import dataclass
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

from dynfuzz.generators.case import Case
from dynfuzz.oracles import Finding
from dynfuzz.run.compilers import CompileSpec
from dynfuzz.run.isolation import RECYCLE_RSS_GROWTH, confine, resident_bytes
from dynfuzz.run.multi_backend import spec_for
from dynfuzz.triage.explain import Explanation
from dynfuzz.triage.pending import NEW_KEY, QUEUED, job_rank, ranks_a_bug

GRACE_SECONDS = 180.0  # beyond the budget: explanation and one repro run, before a job counts as hung
VERIFY_TIMEOUT = 120.0
# The triage worker compiles hundreds of variants per job and grows like a case worker (Note [Workers are
# recycled], campaign/workers.py): a one-hour soak saw it at 900 MB after 11 minutes. Between jobs it is replaced
# after RECYCLE_JOBS jobs, or once its RSS passes RECYCLE_RSS_GROWTH times what it was after its first job.
RECYCLE_JOBS = 25
FRESH_RUNS = 3  # a bucket is flaky only once its repro did not reproduce in this many fresh processes


@dataclass
class Triaged:
    """A finding after triage: the minimized case, its explanation, the repro text and its verdict."""

    case: Case
    finding: Finding
    explanation: Explanation
    repro: str
    verdict: str  # "reproduces", "flaky" (the repro or the minimized case does not show it) or "error"
    seconds: float
    minimized: bool = True
    phases: dict[str, Any] = dataclasses.field(default_factory=dict)  # Phases.as_dict(): seconds and judge calls


def verify(text: str, spec: CompileSpec, runs: int = FRESH_RUNS) -> str:
    """Run the rendered repro in fresh processes until it reproduces, at most `runs` times: "reproduces" (one
    run did), "flaky" (every run exited 0: it did not reproduce) or "error" (the script itself broke)."""
    from dynfuzz.triage.repro import verify_repro
    from dynfuzz.triage.repro_meta import write_repro

    verdicts = []
    with tempfile.TemporaryDirectory(prefix="dynfuzz-verify-") as tmp:
        path = write_repro(Path(tmp) / "repro.py", text)
        for _ in range(max(1, runs)):
            verdicts.append(verify_repro(path, spec, timeout=VERIFY_TIMEOUT))
            if verdicts[-1] == "reproduces":
                return "reproduces"
    return "flaky" if all(v == "flaky" for v in verdicts) else "error"


def triage_one(case: Case, finding: Finding, spec: CompileSpec, budget: float,
               meta: dict[str, Any] | None = None) -> Triaged:
    """Minimize and explain one finding (`explain.identify`, within `budget` s), render and verify its repro."""
    from dynfuzz.errors import UsageError
    from dynfuzz.triage.explain import cheap_explanation, identify
    from dynfuzz.triage.phases import Phases
    from dynfuzz.triage.repro import metadata_for, render_repro
    from dynfuzz.triage.triangulate import static_rerun

    start = time.monotonic()
    phases = Phases()
    spec = spec_for(spec, finding.layer)  # a finding first seen with aot_eager (--backends) is triaged on aot_eager
    try:
        found = identify(case, finding, spec, budget, phases)
    except UsageError:  # it did not diverge again in this long-lived worker: ask fresh processes
        text = render_repro(case, finding, spec, metadata_for(case, finding, spec, **(meta or {})))
        with phases.phase("verify"):
            verdict = verify(text, spec)
        phases.count("verify")
        return Triaged(case, finding, cheap_explanation(case, finding), text, verdict, time.monotonic() - start,
                       False, phases.as_dict())
    explanation = found.explanation
    meta = {**(meta or {}), "bucket": explanation.key, "cause": explanation.cause, "layer": explanation.layer}
    with phases.phase("triangulate"):
        static = static_rerun(found.case, found.finding, spec)
    if static is not None:
        meta["static_rerun"] = static
    text = render_repro(found.case, found.finding, spec, metadata_for(found.case, found.finding, spec, **meta),
                        eager_ok=found.eager_ok)
    with phases.phase("verify"):
        verdict = verify(text, spec)
        if verdict == "flaky":  # flaky is the original program's verdict: its own fresh runs decide
            original = render_repro(case, finding, spec, metadata_for(case, finding, spec, **meta))
            if verify(original, spec) == "reproduces":  # the minimized repro lost it: keep the program as found
                phases.count("verify")
                return Triaged(case, finding, explanation, original, "reproduces", time.monotonic() - start,
                               phases=phases.as_dict())
    phases.count("verify")
    return Triaged(found.case, found.finding, explanation, text, verdict, time.monotonic() - start,
                   phases=phases.as_dict())


def _worker_main(conn: Connection, spec: CompileSpec, budget: float, log: str | None = None) -> None:
    """Triage jobs until told to stop. Minimizing re-runs the program, whose prints (and torch's own
    output) go to `log`, never to the campaign's terminal. The process leads its own process group, so that
    stopping the lane stops the repro runs it started too (they compile into the campaign's cache)."""
    os.setpgrp()
    if log is not None:
        confine(None, log)
    while True:
        job = conn.recv()
        if job is None:
            return
        ident, case, finding, meta = job
        try:
            if ident.startswith("localize "):
                from dynfuzz.triage.localize import localize

                conn.send(("done", ident, localize(case, finding, spec_for(spec, finding.layer))))
                continue
            conn.send(("done", ident, triage_one(case, finding, spec, budget, meta)))
        except Exception as e:  # a dynfuzz bug: the campaign keeps the finding under its cheap key
            conn.send(("error", ident, f"{type(e).__name__}: {e}"))


class TriageQueue:
    """One lane: a worker process that runs one job at a time; it is started on the first job. Jobs wait in
    the lane's own list when it is used alone (`submit`); a `TriagePool` hands its lanes one job at a time."""

    def __init__(self, spec: CompileSpec, budget: float, log: str | None = None) -> None:
        self.spec, self.budget, self.log = spec, budget, log
        self.ctx = mp.get_context("spawn")
        self.process: Any = None
        self.conn: Connection | None = None
        self.waiting: list[tuple[str, Case, Finding, dict]] = []
        self.current: tuple[str, float] | None = None  # (ident, started)
        self.jobs = 0  # jobs the current worker process has finished
        self.baseline_rss: int | None = None  # its RSS after its first job, bytes
        self.recycled = 0

    def __len__(self) -> int:
        return len(self.waiting) + (self.current is not None)

    def submit(self, ident: str, case: Case, finding: Finding, meta: dict[str, Any] | None = None,
               priority: int = 0) -> None:
        self.waiting.append((ident, case, finding, meta or {}))
        self._feed()

    def _start(self) -> None:
        self.jobs, self.baseline_rss = 0, None
        parent, child = self.ctx.Pipe()
        self.process = self.ctx.Process(target=_worker_main, args=(child, self.spec, self.budget, self.log),
                                        daemon=True, name="dynfuzz-triage")
        self.process.start()
        child.close()
        self.conn = parent

    def _stop(self) -> None:
        if self.process is not None:
            try:  # the lane and any repro run it left behind (its process group: _worker_main)
                os.killpg(self.process.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError, TypeError):
                pass
            if self.process.is_alive():
                self.process.kill()
            self.process.join(5)
        if self.conn is not None:
            self.conn.close()
        self.process = self.conn = None

    def _worn_out(self) -> bool:
        if self.process is None or not self.process.is_alive() or self.jobs == 0:
            return False
        if self.jobs >= RECYCLE_JOBS:
            return True
        rss = resident_bytes(self.process.pid)
        if self.baseline_rss is None:
            self.baseline_rss = rss
            return False
        return rss is not None and rss > RECYCLE_RSS_GROWTH * self.baseline_rss

    def start(self, ident: str, case: Case, finding: Finding, meta: dict[str, Any]) -> None:
        """Run one job now (the lane must be idle)."""
        if self._worn_out():
            self.close()
            self.recycled += 1
        if self.process is None or not self.process.is_alive():
            self._stop()
            self._start()
        self.conn.send((ident, case, finding, meta))
        self.current = (ident, time.monotonic())

    def _feed(self) -> None:
        if self.current is None and self.waiting:
            self.start(*self.waiting.pop(0))

    def poll(self, wait: float = 0.0) -> list[tuple[str, str, Any]]:
        """Finished jobs as `(ident, "done" | "error", Triaged | message)`; waits up to `wait` s for one."""
        out: list[tuple[str, str, Any]] = []
        if self.current is None:
            return out
        ident, started = self.current
        try:
            ready = self.conn.poll(wait)
            message = self.conn.recv() if ready else None
        except (EOFError, OSError):
            ready, message = True, None
        if message is not None:
            status, ident, payload = message
            out.append((ident, status, payload))
            self.current = None
            self.jobs += 1
        elif ready or not self.process.is_alive():
            out.append((ident, "error", f"the triage worker died (exit code {self.process.exitcode})"))
            self.current = None
            self._stop()
        elif time.monotonic() - started > self.budget + GRACE_SECONDS:
            out.append((ident, "error", f"triage ran past {self.budget + GRACE_SECONDS:.0f} s"))
            self.current = None
            self._stop()
        self._feed()
        return out

    def drain(self, deadline: float) -> tuple[list[tuple[str, str, Any]], list[str]]:
        """Results until everything is done or `deadline` (monotonic) passes; then the worker is stopped.
        Returns the results and the idents left unfinished."""
        out: list[tuple[str, str, Any]] = []
        while len(self) and time.monotonic() < deadline:
            out += self.poll(wait=min(0.5, max(deadline - time.monotonic(), 0.0)))
        left = ([self.current[0]] if self.current else []) + [job[0] for job in self.waiting]
        self.current, self.waiting = None, []
        self.close()
        return out, left

    def close(self) -> None:
        if self.conn is not None and self.process is not None and self.process.is_alive():
            try:
                self.conn.send(None)
            except OSError:
                pass
            self.process.join(2)
        self._stop()


class TriagePool:
    """Triage lanes fed from one queue ordered by `pending.job_rank`: miscompiles before crashes, refusals last, a
    new cheap key before a suspect within a tier, the newest job first within a rank (Note [Which finding is
    triaged first] in triage/pending.py). The number of lanes follows `resize` (the
    campaign gives lanes to triage while findings wait, and takes them back); a lane above the target is
    closed once its job is done, never in the middle of one."""

    def __init__(self, spec: CompileSpec, budget: float, lanes: int = 1, log_dir: Path | None = None) -> None:
        if log_dir is not None:
            log_dir.mkdir(parents=True, exist_ok=True)
        self.spec, self.budget, self.log_dir = spec, budget, log_dir
        self.lanes: list[TriageQueue] = []
        self.target = max(1, lanes)
        self.waiting: list[tuple[tuple, int, tuple[str, Case, Finding, dict]]] = []  # (sort key, priority, job)
        self.order = 0
        self.closed_recycles = 0
        self.started: dict[str, float] = {}  # ident -> when its job was handed to a lane
        self.job_seconds: list[float] = []  # wall seconds of every finished job, for the capacity policy

    def __len__(self) -> int:
        return len(self.waiting) + sum(lane.current is not None for lane in self.lanes)

    def waiting_count(self, priority: int | None = None) -> int:
        return sum(1 for _, p, _ in self.waiting if priority is None or p == priority)

    def waiting_bugs(self) -> int:
        """Waiting jobs of a finding that is a bug as found (a miscompile or a crash), localizations aside."""
        return sum(1 for rank, _, _ in self.waiting if ranks_a_bug(rank))

    def busy_lanes(self) -> int:
        return sum(lane.current is not None for lane in self.lanes)

    def submit(self, ident: str, case: Case, finding: Finding, meta: dict[str, Any] | None = None,
               priority: int = 0) -> None:
        """Queue a job; `meta[QUEUED]` (stamped by `PendingJobs.save`) says how new it is, else now. Both it and
        `meta[NEW_KEY]` only rank the job: neither reaches the triage worker (its meta enters the repro)."""
        self.order += 1
        meta = dict(meta or {})
        queued = float(meta.pop(QUEUED, time.time()))
        rank = job_rank(priority, finding, meta)
        meta.pop(NEW_KEY, None)
        self.waiting.append(((*rank, -queued, -self.order), priority,
                             (ident, case, finding, meta)))
        self.waiting.sort(key=lambda w: w[0])
        self._feed()

    def resize(self, lanes: int) -> None:
        """Run at most `lanes` jobs at once from now on (at least one)."""
        self.target = max(1, lanes)
        self._feed()

    def _lane(self, i: int) -> TriageQueue:
        while len(self.lanes) <= i:
            log = None if self.log_dir is None else str(self.log_dir / f"triage{len(self.lanes)}.log")
            self.lanes.append(TriageQueue(self.spec, self.budget, log))
        return self.lanes[i]

    def _feed(self) -> None:
        for i in range(self.target):
            if not self.waiting:
                break
            lane = self._lane(i)
            if lane.current is None:
                _, _, job = self.waiting.pop(0)
                self.started[job[0]] = time.monotonic()
                lane.start(*job)
        for lane in self.lanes[self.target:]:  # above the target: closed once idle
            if lane.current is None and lane.process is not None:
                self.closed_recycles += lane.recycled
                lane.recycled = 0
                lane.close()

    def poll(self, wait: float = 0.0) -> list[tuple[str, str, Any]]:
        out: list[tuple[str, str, Any]] = []
        busy = [lane for lane in self.lanes if lane.current is not None]
        for i, lane in enumerate(busy):
            out += lane.poll(wait if i == 0 and not out else 0.0)
        for ident, _, _ in out:
            started = self.started.pop(ident, None)
            if started is not None:
                self.job_seconds.append(time.monotonic() - started)
        self._feed()
        return out

    def drain(self, deadline: float) -> tuple[list[tuple[str, str, Any]], list[str]]:
        """Results until the queue is empty or `deadline` passes, on every lane the pool may use; then the lanes
        are stopped. Returns the results and the idents left unfinished (running or waiting)."""
        out: list[tuple[str, str, Any]] = []
        while len(self) and time.monotonic() < deadline:
            out += self.poll(wait=min(0.2, max(deadline - time.monotonic(), 0.0)))
        left = [lane.current[0] for lane in self.lanes if lane.current is not None] + \
            [job[0] for _, _, job in self.waiting]
        self.waiting = []
        for lane in self.lanes:
            lane.current = None
            lane.close()
        return out, left

    def close(self) -> None:
        for lane in self.lanes:
            lane.close()

    @property
    def recycled(self) -> int:
        return self.closed_recycles + sum(lane.recycled for lane in self.lanes)

    def mean_job_seconds(self, default: float = 30.0) -> float:
        recent = self.job_seconds[-20:]
        return sum(recent) / len(recent) if recent else default


def triage_lanes(workers: int) -> int:
    """Triage lanes a campaign of `workers` keeps while nothing waits: one per three workers, at least one."""
    return max(1, workers // 3)
