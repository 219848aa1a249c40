"""The tracer: the interpreter with a `Recorder` as its observer, one `CallTrace` per traced call."""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .interpreter import Interpreter
from .recorder import Recorder
from .symbolic import plain
from .trace import CallTrace, ReferenceUnsupported


class Tracer(Interpreter):
    """Traces calls of a program's functions: `Tracer(program).trace_call(fn, args, names)` -> CallTrace."""

    observer: Recorder

    def trace_call(self, fn: Callable, args: tuple, names: tuple[str, ...] = ()) -> CallTrace:
        """Interpret one call of `fn(*args)`; the returned trace holds the output or the raised error."""
        if self.program.node_for(fn) is None:
            raise ReferenceUnsupported(f"entry {getattr(fn, '__qualname__', fn)!r} is not program code")
        self.observer = Recorder()
        args = tuple(self.observer.input(names[i] if i < len(names) else f"arg{i}", v, i) for i, v in enumerate(args))
        for name, cell in zip(fn.__code__.co_freevars, fn.__closure__ or ()):
            self.observer.cell_source(cell, f"L[{name!r}]")
        try:
            out = self.call(fn, tuple(args), {}, 0)
            self.observer.trace.output = _plain_deep(out)
            self.observer.output_refs(self.observer.trace.output)
        except ReferenceUnsupported:
            raise
        except Exception as e:  # the program itself raised: part of its observable behaviour
            self.observer.trace.error = e
        return self.observer.trace


def _plain_deep(v: Any) -> Any:
    if type(v) is tuple:
        return tuple(_plain_deep(x) for x in v)
    return plain(v)

