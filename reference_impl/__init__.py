"""The reference tracer: an independent, readable model of what a correct tracing compiler must record.

It interprets a program's Python AST with concrete values plus symbolic
provenance and never imports torch._dynamo. `Interpreter` only runs programs and reports to an `Observer`;
`Tracer` runs it with a `Recorder` as observer and returns a trace (see `trace.py`).
"""
from .interpreter import Interpreter, Program
from .observer import Observer
from .trace import CallTrace, Effect, Guard, Op, ReferenceUnsupported, Trace
from .tracer import Tracer

__all__ = ["CallTrace", "Effect", "Guard", "Interpreter", "Observer", "Op", "Program", "ReferenceUnsupported", "Trace",
           "Tracer"]
