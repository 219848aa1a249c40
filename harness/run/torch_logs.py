"""torch's own log output from one case, captured instead of printed; and torch's logs switched on for a
program drawn with the `logs` setting.

Dynamo logs recoverable internal errors (`E1122 ... Traceback` blocks, graph-break and recompile
warnings) through `torch.*` loggers, each with its own stderr handler. A campaign's terminal is for
dynfuzz's progress, and the log belongs with the case that caused it: `capture()` points those handlers
at a buffer for the duration of one case (warnings and above), and the text is attached to the case's
finding, if it has one.
"""
from __future__ import annotations

import inspect
import io
import logging
import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

_MAX_CHARS = 20_000


class CapturedLog:
    """The text captured for one case (the last `_MAX_CHARS` characters)."""

    def __init__(self) -> None:
        self.buffer = io.StringIO()

    @property
    def text(self) -> str:
        return self.buffer.getvalue()[-_MAX_CHARS:]


def _torch_loggers() -> list[logging.Logger]:
    names = [n for n in logging.Logger.manager.loggerDict if n == "torch" or n.startswith("torch.")]
    return [lg for n in names if isinstance(lg := logging.getLogger(n), logging.Logger)]


def point(handler: logging.StreamHandler, stream: Any) -> Any:
    """Point `handler` at `stream`; returns the stream it had, or the current stderr in place of one that was
    closed since the handler was made (`setStream` would flush it and raise: torch makes its handlers on
    first use, over whatever `sys.stderr` was then, such as a test's captured stream, closed after it)."""
    if getattr(handler.stream, "closed", False):
        handler.stream = stream
        return sys.stderr
    return handler.setStream(stream)


@contextmanager
def capture(level: int = logging.WARNING) -> Iterator[CapturedLog]:
    """Within the block, every torch logger writes to the returned buffer, at `level` and above."""
    log = CapturedLog()
    saved_levels: list[tuple[logging.Logger, int]] = []
    saved_streams: list[tuple[logging.StreamHandler, object]] = []
    for lg in _torch_loggers():
        if lg.level > level:  # quiet_torch_logs() raised these to CRITICAL: let warnings reach the buffer
            saved_levels.append((lg, lg.level))
            lg.setLevel(level)
        for h in lg.handlers:
            # Plain terminal handlers only: torch's own subclasses (LazyTraceHandler for structured traces)
            # manage their streams themselves and break on a buffer. A shared handler is redirected once.
            if type(h) is logging.StreamHandler and h.stream is not None and h.stream is not log.buffer:
                saved_streams.append((h, point(h, log.buffer)))
    root = logging.getLogger("torch")
    catch_all = logging.StreamHandler(log.buffer)  # for torch loggers without a handler of their own
    root.addHandler(catch_all)
    saved_propagate, root.propagate = root.propagate, False  # nothing from torch reaches the terminal
    try:
        yield log
    finally:
        root.propagate = saved_propagate
        root.removeHandler(catch_all)
        for h, stream in saved_streams:
            h.setStream(stream)
        for lg, old in saved_levels:
            lg.setLevel(old)


# What a program's COMPILE_OPTIONS `logs` turns on: Dynamo's debug log and every artifact whose formatting
# walks the traced program (graphs, guards, bytecode, recompile reasons, traced sources and calls, side
# effects, symbolic nodes). Rendered into repros as one `torch._logging.set_logs(...)` call.
TORCH_LOGS: dict[str, Any] = {
    "dynamo": logging.DEBUG, "graph_code": True, "graph_code_verbose": True, "guards": True, "bytecode": True,
    "recompiles": True, "recompiles_verbose": True, "graph_breaks": True, "trace_source": True,
    "trace_call": True, "trace_bytecode": True, "graph_sizes": True, "side_effects": True, "sym_node": True,
    "compiled_autograd_verbose": True,
}


def torch_log_settings() -> dict[str, Any]:
    """TORCH_LOGS less the artifacts this torch's `set_logs` does not know (an older release)."""
    import torch._logging

    known = inspect.signature(torch._logging.set_logs).parameters
    return {k: v for k, v in TORCH_LOGS.items() if k in known}


_DEVNULL: list[Any] = []


def with_torch_logs(fn: Callable, restore: Callable[[], None]) -> Callable:
    """`fn` called with torch's logs on and their text discarded (a debug log of one compile runs to
    megabytes); afterwards torch's defaults are back and `restore` re-applies the campaign's own levels."""
    import torch._logging

    settings = torch_log_settings()

    def run(*args: Any, **kwargs: Any) -> Any:
        if not _DEVNULL:
            _DEVNULL.append(open(os.devnull, "w"))  # noqa: SIM115  (one per process, for its lifetime)
        torch._logging.set_logs(**settings)
        for lg in _torch_loggers():
            for h in lg.handlers:
                if type(h) is logging.StreamHandler:  # as in capture(): not torch's own handler classes
                    point(h, _DEVNULL[0])
        try:
            return fn(*args, **kwargs)
        finally:
            torch._logging.set_logs()
            restore()

    return run
