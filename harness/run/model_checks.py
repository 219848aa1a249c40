"""Where Dynamo's model of a Python object stopped agreeing with Python, seen while Dynamo traces.

A silent divergence is named best by the point where Dynamo's own model went wrong, when that point can be
checked directly against Python's semantics while the case is traced. Each check below compares one of Dynamo's
model steps with what CPython does at the same step, and notes a violation, `<what went wrong> in
<Tracker.method>` (the tracker method that took the wrong step), in the order they happen:

- **a closure bound to another cell**: after `bind_args`, each free variable of a function that has real cells
  must be bound to the tracker Dynamo keeps for that very cell (`side_effects[cell]`), and each free variable of
  a function made while tracing to the matching item of its closure tuple;
- **a container method unlike Python's**: a builtin method (`append`, `popitem`, `__setitem__`...) called on a
  list, dict, set or deque is applied to a model of it too (`run/tracker_models.py`: plain data as itself, other
  items as stand-ins, so only a method that moves items is decided when there are any), and the tracker's
  contents afterwards (and the value it returned) must equal the model's;
- **a write Dynamo did not record**: a method call that changed the contents of a pre-existing container (one with
  a source) must leave it marked modified (`SideEffects.is_modified`), or the write is never replayed;
- **an in-place operator that rebinds**: `a |= b`, `a += b`, `a *= n`... on a list, set, dict or deque must give
  back the same tracker, as CPython gives back the same object;
- **an attribute step unlike CPython's attribute protocol** (`run/attribute_checks.py`): a store past a property
  setter, a user-written descriptor returned without its `__get__`, `hasattr` of a special attribute, a class
  call that never ran its metaclass's user-written `__call__` (no frame of that code was inlined during it);
- **a tensor's size or strides left stale**: a tensor tracker read (a method or attribute) must keep the size,
  strides and dims its graph node's fake tensor has; when they differ, the key names the tracker call during which
  the fake tensor changed (`set_` on an intermediate, an `out=` resize), innermost first.

A check that cannot be decided (contents that are not constants, a method Python raises on, an internal the
running torch lacks) notes nothing: a violation is evidence, its absence is not. This module patches torch's
private classes (each method restored on exit): the one place these checks touch them. torch 2.5 through 2.14
have every internal it reads; a release without one records nothing.
"""
from __future__ import annotations

import gc
import operator
import types
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from dynfuzz.run.attribute_checks import descriptor_unbound, metaclass_call, special_hasattr, store_past_property
from dynfuzz.run.tracker_models import (
    CONTAINERS,
    contents,
    fake_of,
    flat,
    items_of,
    kept_meta,
    meta,
    model,
    opaque,
    python_type,
    realized,
    same,
)
from dynfuzz.run.value_provenance import subclasses

_INPLACE = frozenset({operator.iadd, operator.ior, operator.iand, operator.ixor, operator.isub, operator.imul})
_RESULTS = (type(None), bool, int, float, str, tuple, list)  # results compared (not views, not iterators)
# Methods that move items without comparing or ordering them: decidable with stand-ins for items.
_STRUCTURAL = frozenset({"append", "appendleft", "extend", "extendleft", "insert", "pop", "popleft", "popitem",
                         "__setitem__", "__delitem__", "__getitem__", "clear", "reverse", "rotate", "update",
                         "setdefault", "get", "copy", "move_to_end", "add", "discard"})


class Violations:
    """The violations one judged case's tracing noted, first first (each once)."""

    def __init__(self) -> None:
        self.seen: list[str] = []

    def note(self, what: str) -> None:
        if what not in self.seen:
            self.seen.append(what)

    @property
    def first(self) -> str | None:
        return self.seen[0] if self.seen else None


class _Checker:
    """The wrappers: each notes into `violations`; `active` keeps a tracker's nested call_methods (a subclass
    calling its base's) to one check, at the outermost."""

    def __init__(self, violations: Violations) -> None:
        self.violations = violations
        self.active: set[int] = set()
        self.calls = 0
        self.changed: dict[int, tuple[str, int]] = {}  # fake tensor -> (the call that changed it, its entry)
        self.inlined: list[Any] = []  # the code objects of the frames Dynamo inlined, in order

    def watch(self, given: list[Any]) -> tuple[int, list[tuple[Any, tuple]]]:
        """Enter a tracker call: its stamp, and the metadata of the fake tensors of the trackers it was given."""
        self.calls += 1
        seen = []
        for vt in given:
            fake = fake_of(vt)
            now = meta(fake) if fake is not None else None
            if now is not None:
                seen.append((fake, now))
        return self.calls, seen

    def moved(self, label: str, watched: tuple[int, list[tuple[Any, tuple]]]) -> None:
        """Leave a tracker call: a fake tensor whose size or strides it changed (no call inside it did) was
        changed by it."""
        stamp, seen = watched
        for fake, then in seen:
            if meta(fake) != then and self.changed.get(id(fake), ("", 0))[1] <= stamp:
                self.changed[id(fake)] = (label, stamp)

    def stale(self, vt: Any) -> None:
        """A tensor tracker read after its fake tensor's size or strides changed must know them: Dynamo answers
        `.shape`, `.size()`, `.stride()` and `.numel()` from the tracker's own copy."""
        fake = fake_of(vt)
        now = meta(fake) if fake is not None else None
        kept = kept_meta(vt)
        if now is None or kept is None:
            return
        if any(k is not None and k != m for k, m in zip(kept, now)):
            where = self.changed.get(id(fake), ("an in-place change",))[0]
            self.violations.note(f"tensor size or strides stale after a change in {where}")

    def bind_args(self, fn: Any, owner: str) -> Any:
        checker = self

        def bind_args(self, parent, args, kwargs):
            result = fn(self, parent, args, kwargs)
            try:  # torch 2.5 returns (bound arguments, closure cells)
                bound = result[0] if isinstance(result, tuple) else result
                checker.check_binding(self, parent, bound, owner)
            except Exception:  # noqa: BLE001 - an internal this torch lacks: no evidence
                pass
            return result
        return bind_args

    def check_binding(self, vt: Any, parent: Any, result: dict, owner: str) -> None:
        closure = getattr(getattr(vt, "fn", None), "__closure__", None)
        if closure:
            side_effects = parent.output.side_effects
            names = vt.fn.__code__.co_freevars
            root = parent.output.root_tx
            frame_locals = vars(root).get("symbolic_locals", {})
            for name, cell in zip(names, closure):
                if name not in result:
                    continue
                if (cell in side_effects and result[name] is not side_effects[cell]) or \
                        (result[name] is frame_locals.get(name) and not _frame_holds(root, name, cell)):
                    self.violations.note(f"closure bound to another cell in {owner}.bind_args")
                    return
            return
        items = getattr(getattr(vt, "closure", None), "items", None)
        code = vt.get_code() if hasattr(vt, "get_code") else None
        if isinstance(items, (list, tuple)) and code is not None:
            for name, cell in zip(code.co_freevars, items):
                if name in result and result[name] is not cell:
                    self.violations.note(f"closure bound to another cell in {owner}.bind_args")
                    return

    def call_method(self, fn: Any, owner: str) -> Any:
        checker = self

        def call_method(self, tx, name, args, kwargs):
            checker.stale(self)
            watched = checker.watch([self, *flat(args), *flat(kwargs.values())])
            if id(self) in checker.active or not isinstance(name, str):
                result = fn(self, tx, name, args, kwargs)
                checker.moved(f"{owner}.call_method", watched)
                return result
            checker.active.add(id(self))
            try:
                try:
                    target, kind = super_target(self, name) if owner == "SuperVariable" else (self, None)
                    before = checker.before(target, name, args, kwargs, kind)
                except Exception:  # noqa: BLE001 - nothing to compare with
                    before = None
                result = fn(self, tx, name, args, kwargs)
                checker.moved(f"{owner}.call_method", watched)
                try:
                    checker.after(target, tx, before, result, f"{owner}.call_method")
                except Exception:  # noqa: BLE001 - an internal this torch lacks: no evidence
                    pass
                return result
            finally:
                checker.active.discard(id(self))
        return call_method

    @staticmethod
    def before(vt: Any, name: str, args: list, kwargs: dict, kind: type | None = None) -> tuple[Any, ...] | None:
        """What the step should do, computed on a model of the container and its arguments: (contents before,
        expected contents, expected result, whether it decides the result), or None when the step is no builtin
        method of a container; expected contents None when it cannot be decided (only the written-contents
        check then runs). Items that are no plain data stand in as wildcards (`tracker_models.OPAQUE`): a method
        that compares or orders items (`remove`, `index`, `sort`...) then decides nothing."""
        kind = kind or python_type(vt)
        if kind not in CONTAINERS or not hasattr(kind, name) or items_of(vt) is None:
            return None
        shape = contents(vt)
        try:
            real = model(vt)
            given = [model(a) for a in args]
            named = {k: model(v) for k, v in kwargs.items()}
        except Exception:  # noqa: BLE001 - a tracker no model can be made of
            return (shape, None, None, False)
        if (opaque(real) or opaque(given) or opaque(list(named.values()))) and name not in _STRUCTURAL:
            return (shape, None, None, False)
        try:
            returned = getattr(real, name)(*given, **named)
        except Exception:  # noqa: BLE001 - Python raises here: Dynamo should too, nothing to compare
            return (shape, None, None, False)
        return (shape, real, returned, isinstance(returned, _RESULTS))

    def after(self, vt: Any, tx: Any, before: tuple[Any, ...] | None, result: Any, where: str) -> None:
        """The step against its model (the key names the tracker method, not the container method: one fault of a
        tracker method shows through every method it models wrongly)."""
        if before is None:
            return
        shape, expected, returned, decides = before
        if expected is not None:
            if not same(model(vt), expected) or (decides and not same(model(result), returned)):
                self.violations.note(f"container method unlike Python in {where}")
                return
        if getattr(vt, "source", None) is not None and contents(vt) != shape \
                and not tx.output.side_effects.is_modified(vt):
            self.violations.note(f"write to a pre-existing container not recorded in {where}")

    def _after(self, fn: Any, check: Any) -> Any:
        """`fn(self, tx, name)` wrapped: `check(tracker, name, result)` notes what it finds; a check that breaks
        on an internal this torch lacks notes nothing."""
        def wrapped(vt, tx, name):
            result = fn(vt, tx, name)
            try:
                check(vt, name, result)
            except Exception:  # noqa: BLE001 - an internal this torch lacks: no evidence
                pass
            return result
        return wrapped

    def super_lookup(self, fn: Any, owner: str) -> Any:
        def check(sv: Any, name: str, result: Any) -> None:
            expected = super_attribute(sv, name)
            value = result[0] if isinstance(result, tuple) else result
            if expected is not None and value is not expected:
                self.violations.note("super() resolved another class's attribute in "
                                     f"{owner}._resolved_getattr_and_source")
        return self._after(fn, check)

    def var_getattr(self, fn: Any) -> Any:
        checker = self

        def var_getattr(self, tx, name):
            checker.stale(self)
            return fn(self, tx, name)
        return var_getattr

    def call_function(self, fn: Any, owner: str) -> Any:
        checker = self

        def call_function(self, tx, args, kwargs):
            watched = checker.watch([*flat(args), *flat(kwargs.values())])
            inlined = len(checker.inlined)
            result = fn(self, tx, args, kwargs)
            checker.moved(f"{owner}.call_function", watched)
            try:
                code = metaclass_call(vars(self).get("value")) if owner == "UserDefinedClassVariable" else None
            except Exception:  # noqa: BLE001 - an internal this torch lacks: no evidence
                code = None
            if code is not None and code not in checker.inlined[inlined:]:
                checker.violations.note(f"metaclass __call__ skipped in {owner}.call_function")
            target = realized(args[0]) if args and getattr(self, "fn", None) in _INPLACE else None
            if target is not None and python_type(target) in CONTAINERS and realized(result) is not target:
                checker.violations.note(f"in-place operator made a new object in {owner}.call_function")
            if (getattr(self, "fn", None) or getattr(self, "_fn", None)) is hasattr and len(args) == 2:
                try:
                    checker.check_hasattr(realized(args[0]), args[1], result, owner)
                except Exception:  # noqa: BLE001 - an internal this torch lacks: no evidence
                    pass
            return result
        return call_function

    def check_hasattr(self, obj: Any, name_vt: Any, result: Any, owner: str) -> None:
        real = vars(obj).get("value")
        if real is None or python_type(obj) is not type(real):
            return
        expected = special_hasattr(real, name_vt.as_python_constant())
        if expected is not None and result.as_python_constant() is not expected:
            self.violations.note(f"hasattr unlike Python in {owner}.call_function")

    def class_getattr(self, fn: Any, owner: str) -> Any:
        def check(cls_vt: Any, name: str, result: Any) -> None:
            if descriptor_unbound(vars(cls_vt).get("value"), name, vars(realized(result)).get("value")):
                self.violations.note(f"descriptor returned without its __get__ in {owner}.var_getattr")
        return self._after(fn, check)

    def inline_init(self, fn: Any) -> Any:
        """`InliningInstructionTranslator.__init__(self, parent, code, ...)`, recording the code it inlines."""
        checker = self

        def __init__(self, parent, code, *args, **kwargs):
            checker.inlined.append(code)
            return fn(self, parent, code, *args, **kwargs)
        return __init__

    def store_attr(self, fn: Any) -> Any:
        checker = self

        def store_attr(self, item, name, value, *args, **kwargs):
            try:
                if store_past_property(python_type(item), name):
                    checker.violations.note("attribute stored past its property setter in SideEffects.store_attr")
            except Exception:  # noqa: BLE001 - an internal this torch lacks: no evidence
                pass
            return fn(self, item, name, value, *args, **kwargs)
        return store_attr


def _frame_holds(root: Any, name: str, cell: Any) -> bool:
    """Whether the compiled frame's own free variable `name` is `cell`: the cells of the functions whose code the
    frame runs (found through the code object's referrers; True when none is found, as nothing is known then)."""
    code = getattr(root, "f_code", None)
    if code is None or name not in code.co_freevars:
        return True
    at = code.co_freevars.index(name)
    cells = [fn.__closure__[at] for fn in gc.get_referrers(code)
             if isinstance(fn, types.FunctionType) and fn.__code__ is code and fn.__closure__]
    return not cells or any(c is cell for c in cells)


def _super_mro(sv: Any) -> tuple[tuple[type, ...], int] | None:
    """`super(T, obj)`'s search: the MRO of obj's type (of obj itself when it is a class) and where T sits in it."""
    typevar = sv.typevar.as_python_constant()
    objtype = sv.objvar.python_type()
    if issubclass(objtype, type):
        objtype = sv.objvar.as_python_constant()
    mro = objtype.__mro__
    return (mro, mro.index(typevar)) if typevar in mro else None


def super_attribute(sv: Any, name: str) -> Any:
    """What CPython's `super(T, obj).name` finds: the first class after T in the MRO with `name` in its own
    `__dict__` (None when the lookup cannot be made here)."""
    found = _super_mro(sv)
    if found is None:
        return None
    mro, at = found
    return next((vars(k)[name] for k in mro[at + 1:] if name in vars(k)), None)


def super_target(sv: Any, name: str) -> tuple[Any, type | None]:
    """A `super().<name>(...)` call that CPython resolves to a builtin container's method (a list subclass's
    `super().append`): the object's tracker and that container type, so the call is checked as that method on
    the object's builtin part; else (the SuperVariable, None)."""
    found = _super_mro(sv)
    if found is not None:
        mro, at = found
        home = next((k for k in mro[at + 1:] if name in vars(k)), None)
        if home in CONTAINERS:
            return sv.objvar, home
    return sv, None


@contextmanager
def checking() -> Iterator[Violations]:
    """Check Dynamo's model steps while the block traces; every patch is undone on exit."""
    violations = Violations()
    try:
        from torch._dynamo.side_effects import SideEffects
        from torch._dynamo.symbolic_convert import InliningInstructionTranslator
        from torch._dynamo.variables.base import VariableTracker
        from torch._dynamo.variables.tensor import TensorVariable
    except ImportError:
        yield violations
        return
    checker = _Checker(violations)
    originals: list[tuple[type, str, Any]] = []
    tensors = subclasses(TensorVariable)
    for cls in subclasses(VariableTracker):
        if cls.__name__ == "LazyVariableTracker":
            continue  # it forwards every call to the tracker it realizes, which is checked
        wrappers = {"bind_args": lambda fn, c=cls: checker.bind_args(fn, c.__name__),
                    "call_method": lambda fn, c=cls: checker.call_method(fn, c.__name__),
                    "call_function": lambda fn, c=cls: checker.call_function(fn, c.__name__)}
        if cls in tensors:
            wrappers["var_getattr"] = checker.var_getattr
        if cls.__name__ == "SuperVariable":
            wrappers["_resolved_getattr_and_source"] = lambda fn, c=cls: checker.super_lookup(fn, c.__name__)
        if cls.__name__ == "UserDefinedClassVariable":
            wrappers["var_getattr"] = lambda fn, c=cls: checker.class_getattr(fn, c.__name__)
        for method, wrap in wrappers.items():
            fn = vars(cls).get(method)
            if callable(fn):
                originals.append((cls, method, fn))
                setattr(cls, method, wrap(fn))
    fn = vars(SideEffects).get("store_attr")
    if callable(fn):
        originals.append((SideEffects, "store_attr", fn))
        SideEffects.store_attr = checker.store_attr(fn)
    fn = vars(InliningInstructionTranslator).get("__init__")
    if callable(fn):
        originals.append((InliningInstructionTranslator, "__init__", fn))
        InliningInstructionTranslator.__init__ = checker.inline_init(fn)
    try:
        yield violations
    finally:
        for cls, method, fn in reversed(originals):
            setattr(cls, method, fn)
