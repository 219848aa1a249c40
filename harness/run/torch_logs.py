"""torch's own log output from one case, captured instead of printed.

Dynamo logs recoverable internal errors (`E1122 ... Traceback` blocks, graph-break and recompile
warnings) through `torch.*` loggers, each with its own stderr handler. A campaign's terminal is for
dynfuzz's progress, and the log belongs with the case that caused it: `capture()` points those handlers
at a buffer for the duration of one case (warnings and above), and the text is attached to the case's
finding, if it has one.
"""
from __future__ import annotations

import io
import logging
from collections.abc import Iterator
from contextlib import contextmanager

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
                saved_streams.append((h, h.setStream(log.buffer)))
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
