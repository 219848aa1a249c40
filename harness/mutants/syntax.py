"""Mutant of Dynamo's model of exceptions: what a handler reads from the exception it caught.

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
