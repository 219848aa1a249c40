"""A campaign's workers as Ray actors on a cluster (`dynfuzz fuzz --ray [ADDRESS]`).

`RayPool` has the interface of the local `workers.Pool` (idle, busy, submit, collect, close), so the
campaign loop and its ledger do not know which one runs their cases. What differs is where the work is:

- One actor per CPU of the cluster (per GPU with `--device cuda`, `num_gpus=1` each). Each actor owns
  lanes (slots); the cases the campaign submits to an actor's lanes travel as one block call, and the
  block's results come back as one batch, so the driver pays per block, not per case. The block size
  follows the measured time per case (about `BLOCK_SECONDS` of work, 1 to `MAX_BLOCK` cases), and an
  actor offers two blocks' worth of lanes, so it always has the next block queued.
- Cases arrive as seeds (see `Campaign._next_case`): the actor draws the program itself, because
  drawing costs about 1 ms, which one driver cannot pay for hundreds of workers. Seeds come from the
  campaign's one seed stream, so a Ray campaign draws the same programs as a local one.
- Note [A dead actor's case is a crash, a lost node's cases are not]: before running a case the actor
  records it in a node-local file named after its actor id. A dead actor is restarted by Ray
  (`max_restarts`), and Ray never retries its calls (`max_task_retries=0`), or a crashing case would run
  again. The driver asks the restarted actor for that record: when it is there (the process died, the
  node lives) the recorded case becomes a `crash` finding; when it is not (the actor came back on another
  node) no case is blamed. Either way the block's other cases are run again.
- A case that overruns the per-case timeout is seen through a probe that runs beside the block (its own
  concurrency group); the actor is killed and restarted, and the case becomes a `hang` finding.

Ray is an optional extra (`pip install 'dynfuzz[ray]'`); nothing here imports it at module level.
"""
from __future__ import annotations

import json
import os
import socket
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dynfuzz.errors import UsageError
from dynfuzz.generators.case import Case, draw_case
from dynfuzz.run.compilers import CompileSpec
from dynfuzz.run.harness_errors import HarnessError

CONNECT_TIMEOUT = 10.0
BLOCK_SECONDS = 2.0  # work per block: the driver's cost per case falls with the block, latency grows
MAX_BLOCK = 32
INSTALL_HINT = "Ray is not installed; install the extra: pip install 'dynfuzz[ray]'"


def import_ray():
    """The `ray` module, or a UsageError that says how to install it."""
    try:
        import ray
    except ImportError:
        raise UsageError(INSTALL_HINT) from None
    return ray


def check_address(address: str | None, timeout: float = CONNECT_TIMEOUT) -> None:
    """Fail with a UsageError, within `timeout`, when Ray is missing or `address` does not answer.

    `None`, "" and "local" start a local cluster; "auto" finds a running one on this machine; any other
    address (`HOST:PORT` or `ray://HOST:PORT`) must accept a TCP connection.
    """
    import_ray()
    if address in (None, "", "local", "auto"):
        return
    hostport = address.split("://", 1)[-1]
    host, _, port = hostport.rpartition(":")
    if not host or not port.isdigit():
        raise UsageError(f"--ray address {address!r} is not HOST:PORT or ray://HOST:PORT")
    t0 = time.monotonic()
    try:
        socket.create_connection((host, int(port)), timeout=timeout).close()
    except OSError as e:
        raise UsageError(f"cannot reach the Ray cluster at {address} within {timeout:.0f} s: "
                         f"{e.strerror or e}") from None
    if not address.startswith("ray://"):
        _check_gcs(hostport, max(1.0, timeout - (time.monotonic() - t0)))


def _check_gcs(hostport: str, timeout: float) -> None:
    """Something answers at HOST:PORT: ask it for a Ray cluster id, so a wrong service fails now and fast
    (`ray.init` would retry for 20 s or more)."""
    import threading

    try:
        from ray._raylet import GcsClient  # no public equivalent; without it, ray.init's own errors remain
    except ImportError:
        return
    answer: list[BaseException | None] = []

    def ask() -> None:
        try:
            GcsClient(address=hostport).cluster_id  # noqa: B018  (the request is the point)
            answer.append(None)
        except Exception as e:
            answer.append(e)

    thread = threading.Thread(target=ask, daemon=True)
    thread.start()
    thread.join(timeout)
    if not answer:
        raise UsageError(f"the Ray cluster at {hostport} did not answer within {timeout:.0f} s")
    if answer[0] is not None:
        raise UsageError(f"{hostport} does not answer as a Ray cluster: {str(answer[0]).splitlines()[0]}")


def _record_dir() -> Path:
    path = Path(tempfile.gettempdir()) / "dynfuzz-ray"
    path.mkdir(parents=True, exist_ok=True)
    return path


class CaseRunner:
    """The body of one Ray actor: draws and judges blocks of cases.

    See Note [A dead actor's case is a crash, a lost node's cases are not]."""

    def __init__(self, spec: CompileSpec) -> None:
        import ray
        from dynfuzz.run.compilers import make_compiler

        self.spec = spec
        self.compiler = make_compiler(spec)
        self.node = ray.util.get_node_ip_address()
        self.record = _record_dir() / f"{ray.get_runtime_context().get_actor_id()}.json"
        self.current: tuple[int, float] | None = None  # (lane, start time) of the running case

    def ready(self) -> tuple[str, int]:
        return self.node, os.getpid()

    def post_mortem(self) -> dict[str, Any] | None:
        """What a predecessor of this actor on this node was running when it died (then forgets it)."""
        try:
            record = json.loads(self.record.read_text())
        except (OSError, ValueError):
            return None
        self.record.unlink(missing_ok=True)
        return record

    def probe(self) -> tuple[int, float] | None:
        """The lane of the running case and how long it has run; answered while a block runs."""
        if self.current is None:
            return None
        lane, started = self.current
        return lane, time.monotonic() - started

    def run_block(self, items: list[tuple[int, Case]]) -> tuple[str, float, list[tuple[int, Case, str, Any]]]:
        """Run `(lane, case)` items in order; returns this node, the seconds it took, and
        `(lane, case, status, payload)` each, with the statuses and payloads of local workers
        (`isolation.run_case`)."""
        from dynfuzz.run.isolation import run_case

        start = time.monotonic()
        out = []
        for lane, case in items:
            if not case.source:
                try:
                    case = draw_case(case.seed, case.families)
                except Exception as e:  # a generator bug costs this seed, never the actor
                    out.append((lane, case, "harness-error", HarnessError.from_exception(e, "generator").as_payload()))
                    continue
            self.record.write_text(json.dumps({"lane": lane, "seed": case.seed}))
            self.current = (lane, time.monotonic())
            out.append((lane, case, *run_case(case, self.compiler, self.spec)))
            self.current = None
        self.record.unlink(missing_ok=True)
        return self.node, time.monotonic() - start, out


@dataclass
class Lane:
    """One slot of the pool: a case submitted to an actor, until its result is collected."""

    index: int
    actor: int
    case: Case | None = None
    info: dict[str, Any] = field(default_factory=dict)


@dataclass
class _Actor:
    handle: Any
    lanes: list[Lane]
    pending: list[Lane] = field(default_factory=list)  # submitted, not yet sent
    calls: dict[Any, tuple[list[Lane], float]] = field(default_factory=dict)  # ref -> (lanes, sent at)
    hung_lane: int | None = None


class RayPool:
    """Ray actors behind the `workers.Pool` interface; results arrive a block at a time."""

    runner_class: type = CaseRunner  # benchmarks swap in synthetic runners to measure the driver alone
    fixed_block: int | None = None  # benchmarks pin the block size; None: it follows the time per case

    def __init__(self, spec: CompileSpec, timeout: float, actors: int | None = None,
                 address: str | None = None) -> None:
        ray = import_ray()
        self.ray, self.spec, self.timeout = ray, spec, timeout
        self.block = self.fixed_block or 2  # small until the first blocks have measured a case
        self.seconds_per_case: float | None = None
        self.owns_ray = not ray.is_initialized()
        if self.owns_ray:
            env = {k: v for k, v in os.environ.items() if k.startswith("DYNFUZZ_")}
            kwargs: dict[str, Any] = {"include_dashboard": False, "log_to_driver": False,
                                      "runtime_env": {"env_vars": env} if env else None}
            try:
                ray.init(**kwargs) if address in (None, "", "local") else ray.init(address=address, **kwargs)
            except (ConnectionError, RuntimeError) as e:
                raise UsageError(f"cannot start or join the Ray cluster {address!r}: "
                                 f"{str(e).splitlines()[0]}") from None
        gpu = spec.device == "cuda"
        resources = ray.cluster_resources()
        count = actors or max(1, int(resources.get("GPU" if gpu else "CPU", 1)))
        remote = ray.remote(num_cpus=0 if gpu else 1, num_gpus=1 if gpu else 0, max_restarts=-1,
                            max_task_retries=0, concurrency_groups={"probe": 1})(self.runner_class)
        self.remote = remote
        self.actors: list[_Actor] = []
        for a in range(count):
            lanes = [Lane(a * 2 * MAX_BLOCK + i, a) for i in range(2 * MAX_BLOCK)]
            self.actors.append(_Actor(remote.remote(spec), lanes))
        started = ray.get([a.handle.ready.remote() for a in self.actors])
        self.nodes: Counter[str] = Counter({node: 0 for node, _ in started})
        self.pids = [pid for _, pid in started]
        self.restarts = 0
        self.requeued = 0

    @property
    def size(self) -> int:
        return len(self.actors)

    def idle(self) -> list[Lane]:
        """Free lanes among each actor's first two blocks' worth, round-robin, so cases spread evenly."""
        return [a.lanes[i] for i in range(2 * self.block) for a in self.actors if a.lanes[i].case is None]

    def busy(self) -> list[Lane]:
        return [lane for a in self.actors for lane in a.lanes if lane.case is not None]

    def submit(self, slot: Lane, case: Case, info: dict[str, Any]) -> None:
        slot.case, slot.info = case, info
        self.actors[slot.actor].pending.append(slot)

    def _send(self) -> None:
        """Each actor keeps up to two blocks queued, so it never waits for the driver between blocks."""
        for actor in self.actors:
            while actor.pending and len(actor.calls) < 2:
                lanes, actor.pending = actor.pending[:self.block], actor.pending[self.block:]
                ref = actor.handle.run_block.remote([(lane.index, lane.case) for lane in lanes])
                actor.calls[ref] = (lanes, time.monotonic())

    def collect(self, max_wait: float) -> list[tuple[Case, dict[str, Any], str, Any]]:
        """Finished cases as `(case, info, status, payload)`; status is done, harness-error, crash or hang."""
        self._send()
        refs = {ref: actor for actor in self.actors for ref in actor.calls}
        if not refs:
            return []
        ready, _ = self.ray.wait(list(refs), num_returns=len(refs), timeout=max_wait, fetch_local=True)
        out: list[tuple[Case, dict[str, Any], str, Any]] = []
        for ref in ready:
            actor = refs[ref]
            if ref not in actor.calls:  # died with its actor, already handled
                continue
            lanes, _ = actor.calls.pop(ref)
            try:
                node, seconds, results = self.ray.get(ref)
                self._measure(seconds, len(results))
            except self.ray.exceptions.RayActorError as e:
                out.extend(self._after_death(actor, lanes, e))
                continue
            except self.ray.exceptions.RayError as e:  # the call itself failed: a harness error per case
                payload = HarnessError.from_exception(e).as_payload()
                results = [(lane.index, lane.case, "harness-error", payload) for lane in lanes]
                node = "?"
            self.nodes[node] += len(results)
            by_index = {lane.index: lane for lane in lanes}
            for index, case, status, payload in results:
                lane = by_index[index]
                out.append((case, lane.info, status, payload))
                lane.case = None
        self._watch_hangs()
        self._send()
        return out

    def _measure(self, seconds: float, cases: int) -> None:
        """Follow the time per case (a moving average) and size blocks to about BLOCK_SECONDS of work."""
        if not cases or self.fixed_block:
            return
        per_case = seconds / cases
        spc = self.seconds_per_case
        self.seconds_per_case = per_case if spc is None else 0.7 * spc + 0.3 * per_case
        self.block = max(1, min(MAX_BLOCK, round(BLOCK_SECONDS / max(self.seconds_per_case, 1e-6))))

    def _after_death(self, actor: _Actor, lanes: list[Lane], error: Exception) -> list[tuple]:
        """See Note [A dead actor's case is a crash, a lost node's cases are not]."""
        self.restarts += 1
        for ref in list(actor.calls):  # the later queued block died with the actor too
            queued, _ = actor.calls.pop(ref)
            lanes = lanes + queued
        record = self._post_mortem(actor)
        blamed = record["lane"] if record else None
        if actor.hung_lane is not None:
            blamed, status, payload = actor.hung_lane, "hang", self.timeout
            actor.hung_lane = None
        else:
            status, payload = "crash", _exit_detail(error)
        out = []
        for lane in lanes:
            if lane.index == blamed:
                out.append((_seeded(lane.case, record), lane.info, status, payload))
                lane.case = None
            else:
                self.requeued += 1
        actor.pending = [lane for lane in lanes if lane.case is not None] + actor.pending
        return out

    def _post_mortem(self, actor: _Actor) -> dict[str, Any] | None:
        """Wait (up to 5 min) for Ray to restart the actor, then read its predecessor's record."""
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline:
            try:
                return self.ray.get(actor.handle.post_mortem.remote(), timeout=60)
            except self.ray.exceptions.ActorUnavailableError:  # still restarting
                time.sleep(0.2)
            except self.ray.exceptions.RayActorError:  # restarts exhausted: a fresh actor takes its lanes
                actor.handle = self.remote.remote(self.spec)
                return None
        raise RuntimeError("a Ray actor did not come back within 300 s")

    def _watch_hangs(self) -> None:
        """Kill an actor whose current case has run past the timeout; `_after_death` files it as a hang."""
        now = time.monotonic()
        for actor in self.actors:
            if actor.hung_lane is not None or not any(now - sent > self.timeout for _, sent in actor.calls.values()):
                continue
            try:
                current = self.ray.get(actor.handle.probe.options(concurrency_group="probe").remote(), timeout=10)
            except self.ray.exceptions.RayError:
                continue
            if current is not None and current[1] > self.timeout:
                actor.hung_lane = current[0]
                self.ray.kill(actor.handle, no_restart=False)

    def node_counts(self) -> dict[str, int]:
        """Cases finished per node (by IP address)."""
        return dict(self.nodes)

    def close(self) -> None:
        for actor in self.actors:
            try:
                self.ray.kill(actor.handle, no_restart=True)
            except Exception:  # already gone with its node
                pass
        if self.owns_ray:
            self.ray.shutdown()


def _seeded(case: Case, record: dict[str, Any] | None) -> Case:
    """The blamed case as the actor drew it: a seed-only case is drawn here (the actor's copy died)."""
    if case.source:
        return case
    seed = record["seed"] if record else case.seed
    return draw_case(seed, case.families)


def _exit_detail(error: Exception) -> str:
    """A stable description of how the actor died, for the crash finding's signature."""
    text = str(error)
    for marker in ("SIGSEGV", "SIGABRT", "SIGKILL", "OOM", "out of memory"):
        if marker.lower() in text.lower():
            return f"ray actor died ({marker})"
    return "ray actor died"
