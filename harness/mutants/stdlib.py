"""Mutant of Dynamo's model of a standard-library object: `functools.partial` calls.

Dynamo does not run a `functools.partial` it meets in a frame: it keeps the wrapped function, the bound
arguments and keywords (`FunctoolsPartialVariable`) and merges them with the call's own when the partial
is called. Only the `stdlib` family calls a partial with a keyword it already binds.
"""
from __future__ import annotations

from . import mutant


@mutant("partial-keyword-precedence", construct="stdlib-functools")
def partial_keyword_precedence() -> None:
    """A keyword given at the call loses to the same keyword bound by the partial (the merge order of
    `{**self.keywords, **kwargs}` reversed): `functools.partial(g, k=3)(1, k=2)` calls `g(1, k=3)`."""
    from torch._dynamo.variables.functions import FunctoolsPartialVariable

    def call_function(self, tx, args, kwargs):
        return self.func.call_function(tx, self.args + args, {**kwargs, **self.keywords})

    FunctoolsPartialVariable.call_function = call_function
