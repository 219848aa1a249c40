"""One case, run so that nothing it does can take the campaign down, and nothing it prints reaches the
terminal.

`confine()` is called once at a worker's start: an address-space limit (`--worker-memory`, RLIMIT_AS) so a
runaway case fails inside its worker instead of swapping the machine, a raised `oom_score_adj` so the
kernel's OOM killer picks a worker rather than the campaign, Ctrl-C left to the parent (which stops the
campaign cleanly), faulthandler on so a segfault leaves a Python traceback in the worker's log, and the
worker's stdout/stderr sent to that log. `run_case()` judges one case and turns whatever dynfuzz itself
got wrong into a harness-error payload; torch's log lines are captured and attached to the result.
"""
from __future__ import annotations

import os
import re
import signal
import sys
from collections.abc import Callable
from typing import Any

from dynfuzz.run.harness_errors import HarnessError

_MEMORY_MESSAGE = re.compile(r"can't allocate memory|not enough memory|std::bad_alloc|out of memory", re.I)


def default_worker_memory(workers: int, device: str) -> int | None:
    """RLIMIT_AS per worker when --worker-memory is not given: half the machine's RAM shared by the
    workers, at least 4 GiB (torch reserves ~1 GiB of address space at start-up, threads more); none for
    CUDA, whose start-up reserves address space far beyond physical memory."""
    if device == "cuda" or sys.platform != "linux":
        return None
    total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    return max(4 << 30, total // 2 // max(workers, 1))


def confine(memory: int | None, log: str | None) -> None:
    """Set up the current (worker) process: memory limit, OOM-killer preference, signals, log."""
    import faulthandler

    if log is not None:
        fd = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        os.dup2(fd, 1)
        os.dup2(fd, 2)
        os.close(fd)
        sys.stdout.reconfigure(line_buffering=True)  # a worker killed at the end or by a crash loses no line
    faulthandler.enable(file=sys.stderr, all_threads=False)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C reaches the whole group: the parent handles it
    try:
        with open("/proc/self/oom_score_adj", "w") as fh:
            fh.write("500")
    except OSError:
        pass  # not Linux, or a sandbox without /proc: the limit below still bounds the worker
    if memory is not None:
        import resource

        _, hard = resource.getrlimit(resource.RLIMIT_AS)
        limit = memory if hard == resource.RLIM_INFINITY else min(memory, hard)
        resource.setrlimit(resource.RLIMIT_AS, (limit, hard))


def _vm_peak() -> int | None:
    """This process's peak address space in bytes (Linux), the quantity RLIMIT_AS bounds."""
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("VmPeak:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        return None
    return None


# A worker (a campaign's, campaign/workers.py, or a triage lane, triage/queue.py) is replaced once its resident
# memory passes this many times what it was when warm (Note [Workers are recycled]).
RECYCLE_RSS_GROWTH = 1.5


def resident_bytes(pid: int) -> int | None:
    """Resident set size of a process from /proc (None where there is no /proc, or it has gone)."""
    try:
        with open(f"/proc/{pid}/statm") as fh:
            return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return None


def memory_limit_reached(memory: int | None) -> bool:
    """True once this process has come within 10% of its memory limit: the worker should be replaced."""
    peak = _vm_peak()
    return memory is not None and peak is not None and peak >= 0.9 * memory


def is_memory_error(e: BaseException) -> bool:
    """A failed allocation: Python's MemoryError, or torch's allocator refusing (a RuntimeError)."""
    return isinstance(e, MemoryError) or bool(_MEMORY_MESSAGE.search(str(e)[:2000]))


def run_case(case, compiler, spec, memory: int | None = None) -> tuple[str, Any]:
    """`("done", CaseResult)`, or `("harness-error", payload)` when dynfuzz could not judge the case.

    A case that ran into the worker's memory limit (an allocation failed under it, or the process came
    within 10% of it) is a `memory-limit` harness error, never a finding: the limit is dynfuzz's, not
    torch's."""
    from dynfuzz.run import execute
    from dynfuzz.run.judge import judge
    from dynfuzz.run.torch_logs import capture

    execute.memory_errors.clear()
    try:
        with capture() as log:
            result = judge(case, compiler, spec)
    except Exception as e:  # CaseError (invalid case, snapshot) or a bug in dynfuzz: never a torch finding
        err = HarnessError.from_exception(e, "memory-limit" if memory and is_memory_error(e) else None)
        return "harness-error", err.as_payload()
    if memory is not None and (execute.memory_errors or memory_limit_reached(memory)):
        what = execute.memory_errors[0] if execute.memory_errors else "the worker's address space came within 10%"
        return "harness-error", HarnessError("memory-limit", f"{what} (limit {memory >> 20} MiB)").as_payload()
    result.torch_log = log.text
    return "done", result


_CACHE_VARS = ("TORCHINDUCTOR_CACHE_DIR", "TRITON_CACHE_DIR")


def campaign_compile_cache(out) -> Callable[[], None]:
    """Point torch's compile caches (inductor's, triton's) at `OUT/.torch-cache` for this campaign and its
    workers, which inherit the environment; returns the clean-up that removes the directory and restores
    the environment. A cache directory the user chose (the variable already set) is left alone."""
    import shutil
    from pathlib import Path

    chosen = [v for v in _CACHE_VARS if v not in os.environ]
    if not chosen:
        return lambda: None
    cache = Path(out) / ".torch-cache"
    cache.mkdir(parents=True, exist_ok=True)
    for var in chosen:
        os.environ[var] = str(cache / var.split("_")[0].lower())

    def cleanup() -> None:
        for var in chosen:
            os.environ.pop(var, None)
        shutil.rmtree(cache, ignore_errors=True)

    return cleanup
