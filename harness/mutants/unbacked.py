"""Mutant of symbolic shapes under Dynamo: a data-dependent guard on an unbacked symbol is decided
instead of refused.

With `capture_scalar_outputs`, `.item()` and friends become unbacked symbols; a Python branch on one
(`if u > 2:`) cannot be decided at trace time, so `SymNode.guard_bool` raises
`GuardOnDataDependentSymNode` and Dynamo breaks the graph there. The mutant instead answers True and
installs no guard, so the compiled code takes one side for every later input. It only shows for
programs compiled with `capture_scalar_outputs` (without it, `.item()` itself breaks the graph and the
branch runs in Python), which is what the `unbacked-config` construct generates.
"""
from __future__ import annotations

from . import mutant


@mutant("unbacked-guard-assumed-true", construct="unbacked-config")
def unbacked_guard_assumed_true() -> None:
    """`bool()` of a symbolic condition on an unbacked symbol is True, unguarded, instead of a graph break."""
    from torch.fx.experimental import sym_node
    from torch.fx.experimental.symbolic_shapes import GuardOnDataDependentSymNode

    original = sym_node.SymNode.guard_bool

    def guard_bool(self, file, line):
        try:
            return original(self, file, line)
        except GuardOnDataDependentSymNode:
            return True

    sym_node.SymNode.guard_bool = guard_bool
