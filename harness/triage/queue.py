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
import tempfile
import time
from dataclasses import dataclass
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

from dynfuzz.generators.case import Case
from dynfuzz.oracles import Finding
from dynfuzz.run.compilers import CompileSpec
from dynfuzz.run.multi_backend import spec_for
from dynfuzz.triage.explain import Explanation

GRACE_SECONDS = 180.0  # beyond the budget: explanation and one repro run, before a job counts as hung
VERIFY_TIMEOUT = 120.0
# The triage worker compiles hundreds of variants per job and grows like a case worker (Note [Workers are
# recycled], run/workers.py): a one-hour soak saw it at 900 MB after 11 minutes. Between jobs it is replaced
# after RECYCLE_JOBS jobs, or once its RSS passes RECYCLE_RSS_GROWTH times what it was after its first job.
RECYCLE_JOBS = 25


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


def verify(text: str, spec: CompileSpec) -> str:
    """Run the rendered repro once in a subprocess: "reproduces", "flaky" or "error"."""
    from dynfuzz.triage.repro import verify_repro

    with tempfile.TemporaryDirectory(prefix="dynfuzz-verify-") as tmp:
        path = Path(tmp) / "repro.py"
        path.write_text(text)
        return verify_repro(path, spec, timeout=VERIFY_TIMEOUT)


def triage_one(case: Case, finding: Finding, spec: CompileSpec, budget: float,
               meta: dict[str, Any] | None = None) -> Triaged:
    """Minimize (within `budget` s), explain, render and verify one finding."""
    from dynfuzz.errors import UsageError
    from dynfuzz.run.compilers import make_compiler
    from dynfuzz.triage.explain import cheap_explanation, explain
    from dynfuzz.triage.minimize import minimize
    from dynfuzz.triage.repro import metadata_for, render_repro

    start = time.monotonic()
    spec = spec_for(spec, finding.layer)  # a finding first seen with aot_eager (--backends) is triaged on aot_eager
    try:
        m = minimize(case, spec, budget, finding.signature)
    except UsageError:  # the case no longer diverges when re-run
        return Triaged(case, finding, cheap_explanation(case, finding), "", "flaky", time.monotonic() - start, False)
    explanation = explain(m.case, dataclasses.replace(m.finding, layer=finding.layer), spec, make_compiler(spec))
    meta = {**(meta or {}), "bucket": explanation.key, "cause": explanation.cause, "layer": explanation.layer}
    text = render_repro(m.case, m.finding, spec, metadata_for(m.case, m.finding, spec, **meta))
    verdict = verify(text, spec)
    return Triaged(m.case, m.finding, explanation, text, verdict, time.monotonic() - start)


def _worker_main(conn: Connection, spec: CompileSpec, budget: float, log: str | None = None) -> None:
    """Triage jobs until told to stop. Minimizing re-runs the program, whose prints (and torch's own
    output) go to `log`, never to the campaign's terminal."""
    if log is not None:
        from dynfuzz.run.isolation import confine

        confine(None, log)
    while True:
        job = conn.recv()
        if job is None:
            return
        ident, case, finding, meta = job
        try:
            conn.send(("done", ident, triage_one(case, finding, spec, budget, meta)))
        except Exception as e:  # a dynfuzz bug: the campaign keeps the finding under its cheap key
            conn.send(("error", ident, f"{type(e).__name__}: {e}"))


class TriageQueue:
    """Jobs in, results out, one worker process; it is started on the first job."""

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

    def submit(self, ident: str, case: Case, finding: Finding, meta: dict[str, Any] | None = None) -> None:
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
            if self.process.is_alive():
                self.process.kill()
            self.process.join(5)
        if self.conn is not None:
            self.conn.close()
        self.process = self.conn = None

    def _worn_out(self) -> bool:
        from dynfuzz.run.workers import RECYCLE_RSS_GROWTH, resident_bytes

        if self.process is None or not self.process.is_alive() or self.jobs == 0:
            return False
        if self.jobs >= RECYCLE_JOBS:
            return True
        rss = resident_bytes(self.process.pid)
        if self.baseline_rss is None:
            self.baseline_rss = rss
            return False
        return rss is not None and rss > RECYCLE_RSS_GROWTH * self.baseline_rss

    def _feed(self) -> None:
        if self.current is None and self.waiting:
            if self._worn_out():
                self.close()
                self.recycled += 1
            if self.process is None or not self.process.is_alive():
                self._stop()
                self._start()
            ident, case, finding, meta = self.waiting.pop(0)
            self.conn.send((ident, case, finding, meta))
            self.current = (ident, time.monotonic())

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
    """Several TriageQueue lanes, for campaigns whose workers find new cheap keys faster than one
    minimizer explains them (a 16-core run files dozens a minute, at up to a minute each).
    A job goes to the lane with the fewest jobs; results and leftovers are gathered from all lanes."""

    def __init__(self, spec: CompileSpec, budget: float, lanes: int = 1, log_dir: Path | None = None) -> None:
        if log_dir is not None:
            log_dir.mkdir(parents=True, exist_ok=True)
        self.lanes = [TriageQueue(spec, budget, None if log_dir is None else str(log_dir / f"triage{i}.log"))
                      for i in range(max(1, lanes))]

    def __len__(self) -> int:
        return sum(len(lane) for lane in self.lanes)

    def submit(self, ident: str, case: Case, finding: Finding, meta: dict[str, Any] | None = None) -> None:
        min(self.lanes, key=len).submit(ident, case, finding, meta)

    def poll(self, wait: float = 0.0) -> list[tuple[str, str, Any]]:
        busy = [lane for lane in self.lanes if len(lane)]
        out: list[tuple[str, str, Any]] = []
        for i, lane in enumerate(busy):
            out += lane.poll(wait if i == 0 and not out else 0.0)
        return out

    def drain(self, deadline: float) -> tuple[list[tuple[str, str, Any]], list[str]]:
        out: list[tuple[str, str, Any]] = []
        while len(self) and time.monotonic() < deadline:
            out += self.poll(wait=min(0.2, max(deadline - time.monotonic(), 0.0)))
        left: list[str] = []
        for lane in self.lanes:
            more, rest = lane.drain(time.monotonic())
            out += more
            left += rest
        return out, left

    def close(self) -> None:
        for lane in self.lanes:
            lane.close()

    @property
    def recycled(self) -> int:
        return sum(lane.recycled for lane in self.lanes)


def triage_lanes(workers: int) -> int:
    """Minimizer processes for a campaign of `workers`: one per three workers, at least one."""
    return max(1, workers // 3)
