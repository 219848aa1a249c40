"""Mutants for the identity benchmark (bench/identity.py): one per mechanism the older mutants left uncovered,
each patching one torch function of its own, so that a key shared by two of them is a key that merges faults.

Side-effect replay of a global, guards on a bool flag, an int argument and a dict's keys, Dynamo's models of a
deque and of an OrderedDict. Each docstring says what the broken function then does.
"""
from __future__ import annotations

from . import mutant


@mutant("global-int-store-dropped", construct="effects")
def global_int_store_dropped() -> None:
    """`global G; G = <int>` inside the compiled frame is not recorded: reads later in the frame see the old
    value and the write is never replayed (a global holding anything else is written as before)."""
    from torch._dynamo.side_effects import SideEffects

    original = SideEffects.store_global

    def store_global(self, gvar, name, value):
        if value.is_python_constant() and type(value.as_python_constant()) is int:
            return None
        return original(self, gvar, name, value)

    SideEffects.store_global = store_global


@mutant("bool-guard-dropped", construct="guards")
def bool_guard_dropped() -> None:
    """No guard is installed on a bool the frame specialised on (a global flag, a bool argument): flipping it
    between calls reuses the code traced for the old value."""
    from torch._dynamo import guards

    guards.GuardBuilder.BOOL_MATCH = lambda self, guard: None


@mutant("int-equals-guard-dropped", construct="guards")
def int_equals_guard_dropped() -> None:
    """`EQUALS_MATCH` installs nothing for an int: an int the frame specialised on (an argument, a global, a
    list element) may change between calls without a recompile."""
    from torch._dynamo import guards

    original = guards.GuardBuilder.EQUALS_MATCH

    def EQUALS_MATCH(self, guard, recompile_hint=None):  # noqa: N802 - the name Dynamo dispatches on
        if type(self.get(guard)) is int:
            return None
        return original(self, guard, recompile_hint)

    guards.GuardBuilder.EQUALS_MATCH = EQUALS_MATCH


@mutant("dict-keys-guard-dropped", construct="guards")
def dict_keys_guard_dropped() -> None:
    """`DICT_KEYS_MATCH` checks only the dict's length: a dict argument with other keys of the same number
    reuses code traced for the old keys."""
    from torch._dynamo import guards

    guards.GuardBuilder.DICT_KEYS_MATCH = lambda self, guard: self.SEQUENCE_LENGTH(guard)


@mutant("deque-appendleft-appends", construct="deque")
def deque_appendleft_appends() -> None:
    """Dynamo's deque model takes `appendleft(x)` for `append(x)`: the element lands at the wrong end."""
    from torch._dynamo.variables.lists import DequeVariable

    original = DequeVariable.call_method

    def call_method(self, tx, name, args, kwargs):
        if name == "appendleft":
            name = "append"
        return original(self, tx, name, args, kwargs)

    DequeVariable.call_method = call_method


@mutant("odict-popitem-ignores-last", construct="ordered-dict")
def odict_popitem_ignores_last() -> None:
    """`OrderedDict.popitem(last=False)` pops the last item, as `popitem()` does."""
    from torch._dynamo.variables.user_defined import OrderedDictVariable

    original = OrderedDictVariable.call_method

    def call_method(self, tx, name, args, kwargs):
        if name == "popitem":
            args, kwargs = [], {}
        return original(self, tx, name, args, kwargs)

    OrderedDictVariable.call_method = call_method
