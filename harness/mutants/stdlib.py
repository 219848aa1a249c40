"""Mutants of Dynamo's model of standard-library objects and one-handler torch calls: `functools.partial`
calls, the `wrap` higher-order op, and `torch.inference_mode` as a block.

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


@mutant("wrap-body-dropped", construct="stdlib-hop-wrappers")
def wrap_body_dropped() -> None:
    """The `wrap` higher-order op returns its first operand instead of its body's result: the subgraph is
    still speculated and installed, but its output is not what the call evaluates to."""
    from torch._dynamo.variables.higher_order_ops import WrapHigherOrderVariable

    original = WrapHigherOrderVariable._call_function

    def _call_function(self, tx, args, kwargs):
        original(self, tx, args, kwargs)
        return args[1]

    WrapHigherOrderVariable._call_function = _call_function


@mutant("inference-mode-keeps-grad", construct="stdlib-handlers")
def inference_mode_keeps_grad() -> None:
    """Entering `torch.inference_mode()` in a frame leaves grad mode on while tracing the block, so
    `torch.is_grad_enabled()` inside it folds to True (eager: False)."""
    import torch
    from torch._dynamo.variables.ctx_manager import InferenceModeVariable

    original = InferenceModeVariable.enter

    def enter(self, tx):
        prior = torch.is_grad_enabled()
        result = original(self, tx)
        torch._C._set_grad_enabled(prior)
        return result

    InferenceModeVariable.enter = enter
