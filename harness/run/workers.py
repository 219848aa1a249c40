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
import time
from dataclasses import dataclass, field
from multiprocessing.connection import Connection, wait
from typing import Any

from dynfuzz.generators.case import Case
from dynfuzz.run.compilers import CompileSpec


def _worker_main(conn: Connection, spec: CompileSpec) -> None:
    from dynfuzz.run.compilers import make_compiler
    from dynfuzz.run.judge import judge

    compiler = make_compiler(spec)
    conn.send(("ready", None))
    while True:
        case = conn.recv()
        if case is None:
            return
        try:
            conn.send(("done", judge(case, compiler, spec)))
        except Exception as e:  # a harness bug: report it, keep the worker alive
            conn.send(("error", f"{type(e).__name__}: {e}"))


@dataclass
class Slot:
    """One worker process and the case it is running."""

    index: int
    process: Any = None
    conn: Connection | None = None
    case: Case | None = None
    started: float = 0.0
    info: dict[str, Any] = field(default_factory=dict)


class Pool:
    """N worker processes; `submit` a case to an idle slot, `collect` finished ones."""

    def __init__(self, workers: int, spec: CompileSpec, timeout: float) -> None:
        self.spec, self.timeout = spec, timeout
        self.ctx = mp.get_context("spawn")
        self.slots = [Slot(i) for i in range(workers)]
        for slot in self.slots:
            self._start(slot)
        for slot in self.slots:
            self._await_ready(slot)

    def _start(self, slot: Slot) -> None:
        parent, child = self.ctx.Pipe()
        slot.process = self.ctx.Process(target=_worker_main, args=(child, self.spec), daemon=True)
        slot.process.start()
        child.close()
        slot.conn, slot.case = parent, None

    def _await_ready(self, slot: Slot) -> None:
        if not slot.conn.poll(300):
            raise RuntimeError("a worker did not start within 300 s")
        slot.conn.recv()

    def idle(self) -> list[Slot]:
        return [s for s in self.slots if s.case is None]

    def busy(self) -> list[Slot]:
        return [s for s in self.slots if s.case is not None]

    def submit(self, slot: Slot, case: Case, info: dict[str, Any]) -> None:
        slot.case, slot.info, slot.started = case, info, time.monotonic()
        slot.conn.send(case)

    def collect(self, max_wait: float) -> list[tuple[Case, dict[str, Any], str, Any]]:
        """Finished cases as `(case, info, status, payload)`; status is done, error, crash or hang.

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
                except (EOFError, OSError):
                    slot.process.join(5)
                    status, payload = "crash", slot.process.exitcode
                    self._restart(slot)
            elif time.monotonic() - slot.started > self.timeout:
                status, payload = "hang", self.timeout
                self._restart(slot)
            else:
                continue
            out.append((case, info, status, payload))
        return out

    def _restart(self, slot: Slot) -> None:
        if slot.process.is_alive():
            slot.process.kill()
        slot.process.join(5)
        self._start(slot)
        self._await_ready(slot)
        slot.case = None

    def close(self) -> None:
        for slot in self.slots:
            try:
                slot.conn.send(None)
            except (OSError, BrokenPipeError):
                pass
        for slot in self.slots:
            slot.process.join(5)
            if slot.process.is_alive():
                slot.process.kill()
