"""Which of Dynamo's variable trackers produced a traced value: the wrong value's origin, read while Dynamo traces.

A silent wrong output that needs no side-effect kind, higher-order op or uncommon tracker (the passing
ablations of its program build them too) is still made somewhere in Dynamo: a tracker method computed it
(`FunctoolsPartialVariable.call_function` bound the keywords, `TupleGetterVariable.call_method` read the
field, `SuperVariable.call_method` walked the MRO). While a case is judged under `recording()`, every
`call_function`, `call_method` and `var_getattr` a VariableTracker subclass defines is wrapped to note which
tracker method returned which tracker, with the trackers it was given; the top-level frame's returned tracker
is noted too. `Provenance.origin` walks back from the returned value (the diverging output element when the
finding names one), breadth first, and names the first value made by an uncommon tracker method: the
outermost such method of that value (the construct the program touched), not a glue call around it.

This module patches torch's private classes (each method a subclass defines, restored on exit): the one place
value provenance touches them. It reads `InstructionTranslator._return` and `VariableTracker`'s subclasses,
which torch 2.5 through 2.14 all have; a release without them records nothing (`origin` is None).
"""
from __future__ import annotations

import collections
import dis
import os
import re
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import Any

METHODS = ("call_function", "call_method", "var_getattr")
# Trackers that pass a value through rather than make it: calling a user function or method, lazily built
# trackers, attribute and builtin-method glue. Together with identity's COMMON_TRACKERS they name no mechanism.
PASS_THROUGH = frozenset({
    "LazyVariableTracker", "UserFunctionVariable", "UserMethodVariable", "NestedUserFunctionVariable",
    "GetAttrBuiltinVariable", "BoundBuiltinMethodVariable", "GetAttrVariable", "SkipFunctionVariable",
    "WrappedUserFunctionVariable", "WrappedUserMethodVariable", "CallMethodVariable", "UserDefinedClassVariable",
    "ListBuiltinVariable",
})
# A user object's attribute read hands back what was stored (a wrong store is a side effect, keyed as one) or builds
# a tracker for a class attribute or a bound method: it chooses nothing of its own.
PASS_THROUGH_METHODS = frozenset({"UserDefinedObjectVariable.var_getattr"})
INTERNAL = "torch-internal:"
UNPACKED = "UNPACK_SEQUENCE.items"  # an item `a, b = seq` took out of seq (pass-through: leads back to seq)
_INDEX = re.compile(r"^out\[(\d+)\]")
_BUILTIN_NAMES = frozenset(n for t in (list, dict, set, tuple, str, int, float, object, collections.deque,
                                       collections.OrderedDict) for n in dir(t))


class Provenance:
    """What one judged case's tracing produced: tracker -> [(method label, input trackers)], innermost first."""

    def __init__(self) -> None:
        self.produced: dict[int, list[tuple[str, list[Any]]]] = {}
        self.returned: list[Any] = []
        self._alive: list[Any] = []  # keeps every noted tracker alive, so an id is never reused within a case
        self._first_seen: dict[int, int] = {}  # tracker -> the count of calls entered when it was first seen
        self._calls = 0

    def enter(self, inputs: list[Any]) -> int:
        """A tracker method starts with `inputs`; returns its stamp for `note`."""
        self._calls += 1
        for vt in inputs:
            self._first_seen.setdefault(id(vt), self._calls)
        self._alive.append(inputs)
        return self._calls

    def note(self, result: Any, label: str, inputs: list[Any], stamp: int) -> None:
        """`label` returned `result`: its producer, except an attribute read that hands back a tracker already
        there before it began (a stored attribute: the read made nothing; a call choosing an existing tracker,
        a field getter say, may have chosen the wrong one and stays its producer)."""
        if self._first_seen.setdefault(id(result), stamp) < stamp and ".var_getattr" in label:
            return
        self._alive.append(result)
        self.produced.setdefault(id(result), []).append((label, inputs))

    def origin(self, details: Iterable[str] = (), common: frozenset[str] = frozenset()) -> str | None:
        """`Tracker.method` that made the returned value (its element the first `out[i]` detail names), or None
        when only common or pass-through trackers made it (or nothing was recorded)."""
        if not self.returned:
            return None
        root = self.returned[-1]  # after graph breaks, the last resumed frame returns the function's value
        index = next((int(m.group(1)) for m in map(_INDEX.match, details) if m), None)
        items = vars(root).get("items")
        if index is not None and isinstance(items, (list, tuple)) and index < len(items):
            root = items[index]
        skip = common | PASS_THROUGH | {UNPACKED.split(".", 1)[0]}
        seen: set[int] = set()
        queue = collections.deque([root])
        while queue:
            vt = queue.popleft()
            if id(vt) in seen:
                continue
            seen.add(id(vt))
            made = self.produced.get(id(vt), [])
            telling = [label for label, _ in made
                       if label.split(".", 1)[0] not in skip and label.split(":", 1)[0] not in PASS_THROUGH_METHODS
                       and not label.startswith(INTERNAL)]
            if telling:
                return telling[-1]
            for _, inputs in made:
                queue.extend(inputs)
            items = vars(vt).get("items")
            if isinstance(items, (list, tuple)):
                queue.extend(items)
            cached = getattr(vars(vt).get("_cache"), "vt", None)
            if cached is not None:
                queue.append(cached)
        return None


def _trackers(values: Iterable[Any], base: type) -> Iterator[Any]:
    for v in values:
        if isinstance(v, base):
            yield v
        elif isinstance(v, (list, tuple)):
            yield from _trackers(v, base)
        elif isinstance(v, dict):
            yield from _trackers(v.values(), base)


def _label(tracker: Any, method: str, args: tuple) -> str:
    """`Class.method`, with the name a `call_method` calls when it is a builtin or tensor method (a user's method
    name is the program's surface, not Dynamo's). Made while Dynamo traced torch's own Python (a functools.partial
    inside `associative_scan`, say) it is `INTERNAL`-prefixed and passes the value through, unless the tracker is
    a higher-order op (torch's wrappers are what call those)."""
    label = f"{type(tracker).__name__}.{method}"
    if "HigherOrder" not in label and args and _torch_frame(args[0]):
        return INTERNAL + label
    name = args[1] if method == "call_method" and len(args) > 1 and isinstance(args[1], str) else None
    if name is not None and (name in _BUILTIN_NAMES or _tensor_method(name)):
        label += f":{name}"
    return label


def _torch_frame(tx: Any) -> bool:
    """Whether the instruction translator `tx` traces a frame of torch's own source."""
    import torch

    code = getattr(tx, "f_code", None)
    filename = getattr(code, "co_filename", "") or ""
    return filename.startswith(os.path.dirname(torch.__file__) + os.sep)


def _tensor_method(name: str) -> bool:
    import torch

    return hasattr(torch.Tensor, name)


def subclasses(base: type) -> set[type]:
    """`base` and every class below it, at any depth (each gets its own patch: a method a subclass defines)."""
    found, stack = {base}, [base]
    while stack:
        for sub in stack.pop().__subclasses__():
            if sub not in found:
                found.add(sub)
                stack.append(sub)
    return found


@contextmanager
def recording() -> Iterator[Provenance]:
    """Record provenance while the block traces; every patch is undone on exit."""
    prov = Provenance()
    try:
        import torch._dynamo.variables  # noqa: F401 - every tracker module, so every subclass is patched
        from torch._dynamo.symbolic_convert import InstructionTranslator, InstructionTranslatorBase
        from torch._dynamo.variables.base import VariableTracker
    except ImportError:
        yield prov
        return
    originals: list[tuple[type, str, Any]] = []
    tables: list[tuple[list, int, Any]] = []

    def wrap(method: str, fn: Any) -> Any:
        def traced(self, *args, **kwargs):
            inputs = [self, *_trackers(args, VariableTracker), *_trackers(kwargs.values(), VariableTracker)]
            stamp = prov.enter(inputs)
            result = fn(self, *args, **kwargs)
            if isinstance(result, VariableTracker):
                prov.note(result, _label(self, method, args), inputs, stamp)
            return result
        return traced

    for cls in subclasses(VariableTracker):
        for method in METHODS:
            fn = cls.__dict__.get(method)
            if callable(fn):
                originals.append((cls, method, fn))
                setattr(cls, method, wrap(method, fn))
    unpacking = InstructionTranslatorBase.__dict__.get("UNPACK_SEQUENCE")
    if callable(unpacking):
        def unpack_sequence(self, inst):  # `a, b = seq`: each item also comes from `seq` (a popitem's pair, say)
            seq = self.stack[-1] if self.stack else None
            done = unpacking(self, inst)
            count = inst.argval if isinstance(inst.argval, int) else 0
            if isinstance(seq, VariableTracker) and 0 < count <= len(self.stack):
                for item in self.stack[-count:]:
                    prov.note(item, UNPACKED, [seq], 0)
            return done
        op = dis.opmap["UNPACK_SEQUENCE"]
        for cls in subclasses(InstructionTranslatorBase):  # opcodes dispatch through a per-class table
            table = cls.__dict__.get("dispatch_table")
            if isinstance(table, list) and op < len(table) and table[op] is unpacking:
                table[op] = unpack_sequence
                tables.append((table, op, unpacking))
    returning = InstructionTranslator.__dict__.get("_return")
    if callable(returning):
        def _return(self, inst):
            if self.stack:
                prov.returned.append(self.stack[-1])
                prov._alive.append(self.stack[-1])
            return returning(self, inst)
        originals.append((InstructionTranslator, "_return", returning))
        InstructionTranslator._return = _return
    try:
        yield prov
    finally:
        for cls, method, fn in reversed(originals):
            setattr(cls, method, fn)
        for table, op, fn in tables:
            table[op] = fn
