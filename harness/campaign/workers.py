"""Worker processes that run cases in isolation, so a segfault or hang in torch costs one case.

The parent writes each case to disk before dispatching it (Note [A case is
saved before it executes]); a worker that dies or overruns the per-case
timeout is replaced and its case becomes a `crash` or `hang` finding.

Note [A case is saved before it executes]
The in-flight file `inflight/<worker>.py` is written before the worker sees
the case and removed only after its result arrived. If torch kills the worker,
or the whole campaign, the program that did it is on disk.
"""
from __future__ import annotations

import multiprocessing as mp
import os
import time
from dataclasses import dataclass, field
from multiprocessing.connection import Connection, wait
from typing import Any

from dynfuzz.campaign.line_coverage import Collector, CoverageSpec
from dynfuzz.generators.case import Case
from dynfuzz.run.compilers import CompileSpec, make_compiler
from dynfuzz.run.isolation import RECYCLE_RSS_GROWTH, confine, memory_limit_reached, resident_bytes, run_case


def _worker_main(conn: Connection, spec: CompileSpec, coverage: CoverageSpec | None = None,
                 limits: WorkerLimits | None = None, index: int = 0) -> None:
    limits = limits or WorkerLimits()
    confine(limits.memory, limits.log_for(index))  # before torch is imported: its start-up counts too
    collector = Collector(coverage, "worker") if coverage is not None else None  # before torch is imported
    try:
        compiler = make_compiler(spec)
        if collector is not None:
            collector.new_lines()  # start-up lines: kept in the worker's data file, credited to no case
        conn.send(("ready", None))
        while True:
            case = conn.recv()
            if case is None:
                return
            status, payload = run_case(case, compiler, spec, limits.memory)
            if status == "done" and collector is not None:
                payload.coverage = collector.new_lines()
            conn.send((status, payload))
            if memory_limit_reached(limits.memory):
                return  # the parent replaces this worker: its address space is spent
    finally:
        if collector is not None:
            collector.save()


@dataclass(frozen=True)
class WorkerLimits:
    """What confines a worker: `memory`, its RLIMIT_AS in bytes (None: no limit), and `log_dir`, where worker
    i's stdout/stderr go, as `w<i>.log` (None: inherit the parent's; a campaign passes OUT/workers/)."""

    memory: int | None = None
    log_dir: str | None = None

    def log_for(self, index: int) -> str | None:
        return None if self.log_dir is None else os.path.join(self.log_dir, f"w{index}.log")


class WorkerStartError(RuntimeError):
    """The worker processes could not be started (the message says why and where their log is)."""


@dataclass
class Slot:
    """One worker process and the case it is running."""

    index: int
    process: Any = None
    conn: Connection | None = None
    case: Case | None = None
    started: float = 0.0
    info: dict[str, Any] = field(default_factory=dict)
    cases: int = 0  # cases this worker process has finished
    baseline_rss: int | None = None  # its resident memory once warm (after WARM_CASES cases), bytes


# Note [Workers are recycled]
# A worker's resident memory grows with every case it compiles, even with `torch._dynamo.reset()` between
# cases: over a one-hour soak (2 workers, 5,210 cases) it went from 380 MB to 945 MB. So an idle worker is
# replaced by a fresh one after RECYCLE_AFTER cases, or sooner once its RSS exceeds RECYCLE_RSS_GROWTH times
# what it was when warm. It exits cleanly (coverage data saved), between cases, so no case is lost.
RECYCLE_AFTER = 400
WARM_CASES = 20


class Pool:
    """N worker processes; `submit` a case to an idle slot, `collect` finished ones."""

    def __init__(self, workers: int, spec: CompileSpec, timeout: float, coverage: CoverageSpec | None = None,
                 *, limits: WorkerLimits | None = None, recycle_after: int = RECYCLE_AFTER) -> None:
        self.spec, self.timeout, self.coverage = spec, timeout, coverage
        self.recycle_after = recycle_after
        self.recycled = 0  # workers replaced by Note [Workers are recycled]
        self.limits = limits or WorkerLimits()
        self.ctx = mp.get_context("spawn")
        self.slots = [Slot(i) for i in range(workers)]
        for slot in self.slots:
            self._start(slot)
        for slot in self.slots:
            self._await_ready(slot)

    def _start(self, slot: Slot) -> None:
        parent, child = self.ctx.Pipe()
        slot.process = self.ctx.Process(target=_worker_main, args=(child, self.spec, self.coverage, self.limits,
                                                                        slot.index), daemon=True)
        slot.process.start()
        child.close()
        slot.conn, slot.case = parent, None

    def _await_ready(self, slot: Slot) -> None:
        if not slot.conn.poll(300):
            raise WorkerStartError("a worker did not start within 300 s")
        try:
            slot.conn.recv()
        except (EOFError, OSError):
            slot.process.join(5)
            log = self.limits.log_for(slot.index)
            raise WorkerStartError(f"a worker died while starting (exit code {slot.process.exitcode})"
                                   + (f"; see {log}" if log else "")) from None

    def idle(self) -> list[Slot]:
        return [s for s in self.slots if s.case is None]

    def busy(self) -> list[Slot]:
        return [s for s in self.slots if s.case is not None]

    def submit(self, slot: Slot, case: Case, info: dict[str, Any]) -> None:
        slot.case, slot.info, slot.started = case, info, time.monotonic()
        slot.conn.send(case)

    def collect(self, max_wait: float) -> list[tuple[Case, dict[str, Any], str, Any]]:
        """Finished cases as `(case, info, status, payload)`; status is done, harness-error, crash or hang.

        Their slots are idle again when this returns (a dead or stuck worker is replaced first).
        """
        busy = self.busy()
        if not busy:
            return []
        soonest = min(s.started + self.timeout for s in busy) - time.monotonic()
        ready = wait([s.conn for s in busy], timeout=max(0.0, min(max_wait, soonest)))
        out = []
        for slot in busy:
            case, info = slot.case, slot.info
            if slot.conn in ready:
                try:
                    status, payload = slot.conn.recv()
                    slot.case = None
                    if status == "harness-error" and payload.get("kind") == "memory-limit":
                        self._restart(slot)  # the worker exits after reporting it
                    elif self._worn_out(slot):
                        self._recycle(slot)
                except (EOFError, OSError):
                    slot.process.join(5)
                    status, payload = "crash", slot.process.exitcode
                    info["worker_log"] = self._log_tail(slot)
                    self._restart(slot)
            elif time.monotonic() - slot.started > self.timeout:
                status, payload = "hang", self.timeout
                self._restart(slot)
            else:
                continue
            out.append((case, info, status, payload))
        return out

    def _log_tail(self, slot: Slot, chars: int = 6000) -> str:
        """The end of a dead worker's stdout/stderr (faulthandler's traceback of a segfault lands there)."""
        log = self.limits.log_for(slot.index)
        if log is None or not os.path.exists(log):
            return ""
        with open(log, "rb") as fh:
            fh.seek(max(0, os.path.getsize(log) - chars))
            return fh.read().decode(errors="replace")

    def _worn_out(self, slot: Slot) -> bool:
        """True when an idle worker should be replaced (Note [Workers are recycled])."""
        slot.cases += 1
        if slot.cases >= self.recycle_after:
            return True
        if slot.cases == WARM_CASES:
            slot.baseline_rss = resident_bytes(slot.process.pid)
        if slot.baseline_rss and slot.cases % 10 == 0:
            rss = resident_bytes(slot.process.pid)
            return rss is not None and rss > RECYCLE_RSS_GROWTH * slot.baseline_rss
        return False

    def _recycle(self, slot: Slot) -> None:
        """Ask an idle worker to exit (it saves its coverage data), then start a fresh one in its slot."""
        try:
            slot.conn.send(None)
        except (OSError, BrokenPipeError):
            pass
        slot.process.join(10)
        self.recycled += 1
        self._restart(slot)

    def _restart(self, slot: Slot) -> None:
        if slot.process.is_alive():
            slot.process.kill()
        slot.process.join(5)
        self._start(slot)
        self._await_ready(slot)
        slot.case, slot.cases, slot.baseline_rss = None, 0, None

    def close(self) -> None:
        """Idle workers are asked to exit (5 s), busy ones are killed at once: their cases were abandoned."""
        for slot in self.slots:
            if slot.case is None:
                try:
                    slot.conn.send(None)
                except (OSError, BrokenPipeError):
                    pass
        until = time.monotonic() + 5
        for slot in self.slots:
            if slot.case is None:
                slot.process.join(max(0.0, until - time.monotonic()))
            if slot.process.is_alive():
                slot.process.kill()
                slot.process.join(5)
