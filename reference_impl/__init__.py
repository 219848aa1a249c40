"""The reference tracer: an independent, readable model of what a correct tracing compiler must record.

It interprets a program's Python AST with concrete values plus symbolic
provenance and never imports torch._dynamo. See `trace.py` for its output.
"""
from .interpreter import Interpreter, Program
from .trace import CallTrace, Effect, Guard, Op, ReferenceUnsupported, Trace

__all__ = ["CallTrace", "Effect", "Guard", "Interpreter", "Op", "Program", "ReferenceUnsupported", "Trace"]
