"""Mutants of Dynamo's container and attribute replay: what a mutated pre-existing object looks like
after the compiled code has run.

Dynamo applies a compiled frame's mutations of pre-existing containers and objects after the graph,
from its own model of them (`SideEffects.codegen_update_mutated`). These mutants break that replay in
ways only one construct shows: a subscript write that is the only mutation of its container
(`sole-mutation`), and the order in which new attributes are added to an object (`order-state`).
"""
from __future__ import annotations

from . import mutant

_SUBSCRIPT_WRITES = ("__setitem__", "__delitem__")


def _unmarked(original):
    def call_method(self, tx, name, args, kwargs):
        if name not in _SUBSCRIPT_WRITES or self.source is None:
            return original(self, tx, name, args, kwargs)
        side_effects = tx.output.side_effects
        side_effects.mutation = lambda var: None  # shadows the method on this instance only
        try:
            return original(self, tx, name, args, kwargs)
        finally:
            del side_effects.mutation

    return call_method


@mutant("subscript-write-unmarked", construct="sole-mutation")
def subscript_write_unmarked() -> None:
    """`c[i] = v`, `c[i] += v`, `c[i:j] = ...` and `del c[i]` on a pre-existing list update Dynamo's
    model but do not mark the list mutated: the write is replayed only when another mutation of the
    same list (an append, a sort...) marks it, and lost when it is the only one."""
    from torch._dynamo.variables.lists import ListVariable

    ListVariable.call_method = _unmarked(ListVariable.call_method)


@mutant("attr-replay-reversed", construct="order-state")
def attr_replay_reversed() -> None:
    """Attribute writes to a pre-existing object are replayed in reverse: `codegen_update_mutated` walks
    its writes backwards and applies them in that order (one of its two reversals lost), so new
    attributes added in one call appear in `vars(obj)` in the opposite order; values stay right."""
    from torch._dynamo import variables
    from torch._dynamo.side_effects import SideEffects
    from torch._dynamo.variables.base import AttributeMutationExisting

    original = SideEffects.codegen_update_mutated

    def codegen_update_mutated(self, cg, *args, **kwargs):
        saved = dict(self.store_attr_mutations)
        for var, writes in saved.items():
            if isinstance(var, variables.UserDefinedObjectVariable) \
                    and isinstance(var.mutation_type, AttributeMutationExisting):
                self.store_attr_mutations[var] = dict(reversed(writes.items()))
        try:
            return original(self, cg, *args, **kwargs)
        finally:
            self.store_attr_mutations.update(saved)

    SideEffects.codegen_update_mutated = codegen_update_mutated
