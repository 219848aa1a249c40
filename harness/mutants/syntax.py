"""Mutants of Dynamo's model of exceptions (what a handler reads from the exception it caught) and of a
`with` form (what a context manager leaves behind when its block ends).

Dynamo raises and catches exceptions inside the traced frame itself (`ExceptionVariable`, the exception
table of `symbolic_convert`), so `except E as e: ... e.args ...` never runs the real exception object.
Only the `syntax` family raises exceptions on purpose with several arguments and reads them back
(construct `try-except` and `raise-flow`); the mutant corrupts exactly that read.
"""
from __future__ import annotations

from . import mutant


@mutant("exc-args-reversed", construct="try-except")
def exc_args_reversed() -> None:
    """`e.args` of an exception raised and caught inside the compiled frame comes back reversed when the
    exception was built with several arguments: `raise ValueError(3, t)` caught as `e` gives
    `e.args == (t, 3)`. Single-argument exceptions are unaffected."""
    from torch._dynamo.variables.misc import ExceptionVariable

    original = ExceptionVariable.var_getattr

    def var_getattr(self, tx, name):
        if name != "args" or len(self.args) < 2:
            return original(self, tx, name)
        saved = self.args
        self.args = list(reversed(saved))
        try:
            return original(self, tx, name)
        finally:
            self.args = saved

    ExceptionVariable.var_getattr = var_getattr


@mutant("error-on-graph-break-kept", construct="with-forms")
def error_on_graph_break_kept() -> None:
    """Leaving a `torch._dynamo.error_on_graph_break(flag)` block keeps `flag` instead of restoring the
    setting the block found: a graph break after a `with error_on_graph_break(True):` block then raises
    `Unsupported` where eager (and the real Dynamo) runs on. Only the `with-forms` construct draws the
    context manager."""
    from torch._dynamo.variables.ctx_manager import ErrorOnGraphBreakVariable

    original = ErrorOnGraphBreakVariable.__init__

    def __init__(self, error_on_graph_break, **kwargs):
        original(self, error_on_graph_break, **kwargs)
        self.initial_values = self.target_values

    ErrorOnGraphBreakVariable.__init__ = __init__
