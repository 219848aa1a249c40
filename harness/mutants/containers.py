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


_INPLACE = {"ior": "or_", "imul": "mul", "iand": "and_", "isub": "sub", "ixor": "xor", "iadd": "add"}


@mutant("inplace-arg-rebinds", construct="inplace-arg")
def inplace_arg_rebinds() -> None:
    """An in-place operator (`|=`, `*=`, `&=`, `-=`, `^=`, `+=`) on a list, set, dict or deque the frame
    received is traced as the plain operator: a new object bound to the name, the caller's object untouched
    (what torch 2.5 did for `|=` on a set argument or `*=` on a list argument)."""
    import operator

    from torch._dynamo.variables import BuiltinVariable
    from torch._dynamo.variables.dicts import ConstDictVariable
    from torch._dynamo.variables.lists import ListVariable
    from torch._dynamo.variables.sets import SetVariable

    plain = {getattr(operator, k): getattr(operator, v) for k, v in _INPLACE.items()}
    original = BuiltinVariable.call_function

    def call_function(self, tx, args, kwargs):
        fn = plain.get(self.fn)
        if fn is not None and args and isinstance(args[0], (ListVariable, SetVariable, ConstDictVariable)) \
                and args[0].source is not None:
            try:
                return BuiltinVariable(fn).call_function(tx, args, kwargs)
            except Exception:  # the plain operator does not apply (a deque): trace the in-place one
                pass
        return original(self, tx, args, kwargs)

    BuiltinVariable.call_function = call_function


@mutant("super-mutator-dropped-under-fullgraph", construct="subclass-super-fullgraph")
def super_mutator_dropped_under_fullgraph() -> None:
    """Under `fullgraph=True`, `super().<mutator>(...)` in a list, dict or set subclass resolves to the
    builtin method and is dropped: the subclass's own bookkeeping runs, the element never lands."""
    from torch._dynamo.variables import ConstantVariable
    from torch._dynamo.variables.misc import SuperVariable

    mutators = {(list, "append"), (list, "extend"), (dict, "__setitem__"), (dict, "update"), (set, "add"),
                (set, "update")}
    original = SuperVariable.call_method

    def call_method(self, tx, name, args, kwargs):
        owner = getattr(getattr(self, "objvar", None), "python_type", lambda: None)()
        if getattr(tx, "one_graph", False) and owner is not None and any(
                issubclass(owner, base) and name == meth for base, meth in mutators):
            return ConstantVariable.create(None)
        return original(self, tx, name, args, kwargs)

    SuperVariable.call_method = call_method
