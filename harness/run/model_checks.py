"""Where Dynamo's model of a Python object stopped agreeing with Python, seen while Dynamo traces.

A silent divergence is named best by the point where Dynamo's own model went wrong, when that point can be
checked directly against Python's semantics while the case is traced. Each check below compares one of Dynamo's
model steps with what CPython does at the same step, and notes a violation, `<what went wrong> in
<Tracker.method>` (the tracker method that took the wrong step), in the order they happen:

- **a closure bound to another cell**: after `bind_args`, each free variable of a function that has real cells
  must be bound to the tracker Dynamo keeps for that very cell (`side_effects[cell]`), and each free variable of
  a function made while tracing to the matching item of its closure tuple;
- **a container method unlike Python's**: a builtin method (`append`, `popitem`, `__setitem__`...) called on a
  list, dict, set or deque whose contents are all constants is applied to a real copy too, and the tracker's
  contents afterwards (and the constant it returned) must equal the copy's;
- **a write Dynamo did not record**: a method call that changed the contents of a pre-existing container (one with
  a source) must leave it marked modified (`SideEffects.is_modified`), or the write is never replayed;
- **an in-place operator that rebinds**: `a |= b`, `a += b`, `a *= n`... on a list, set, dict or deque must give
  back the same tracker, as CPython gives back the same object.

A check that cannot be decided (contents that are not constants, a method Python raises on, an internal the
running torch lacks) notes nothing: a violation is evidence, its absence is not. This module patches torch's
private classes (each method restored on exit): the one place these checks touch them. torch 2.5 through 2.14
have every internal it reads; a release without one records nothing.
"""
from __future__ import annotations

import collections
import copy
import operator
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from dynfuzz.run.value_provenance import subclasses

CONTAINERS = (list, dict, set, collections.deque, collections.OrderedDict, collections.defaultdict)
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


def _owner(cls: type, method: str) -> str:
    """The class whose `method` an instance of `cls` runs: the one a Dynamo engineer opens."""
    for klass in cls.__mro__:
        if method in vars(klass):
            return klass.__name__
    return cls.__name__


_LAZY = "LazyVariableTracker"


def _real(vt: Any) -> Any:
    """A lazily built tracker's tracker when it was realized, else the lazy one: a check never realizes a tracker
    (that installs guards, and would change what it checks)."""
    if type(vt).__name__ == _LAZY:
        realized = getattr(vars(vt).get("_cache"), "vt", None)
        return realized if realized is not None else vt
    return vt


def _python_type(vt: Any) -> type | None:
    vt = _real(vt)
    if type(vt).__name__ == _LAZY:
        return None
    try:
        return vt.python_type()
    except Exception:  # noqa: BLE001 - a tracker with no Python type to compare with
        return None


class _Opaque:
    """A stand-in for an item that is no plain data (a tensor, an object, a value still behind a lazy tracker):
    equal to any item, so only where the items of plain data go is compared (Dynamo may wrap one value in
    another tracker, or realize a lazy one, without changing what the container holds)."""

    __slots__ = ()

    def __eq__(self, other: object) -> bool:
        return True

    def __hash__(self) -> int:
        return 0

    def __repr__(self) -> str:
        return "<?>"


OPAQUE = _Opaque()


class _Undecidable(Exception):
    pass


def _model(vt: Any, depth: int = 0) -> Any:
    """The Python value a tracker models, built afresh: a list, tuple, dict, set or deque tracker as that container
    of its items' models; plain data (a constant, or a lazy tracker's value) as itself; anything else `OPAQUE`."""
    if depth > 4:
        raise _Undecidable
    if type(vt).__name__ == _LAZY:  # its value, peeked at: the same before and after it is realized
        value = getattr(vars(vt).get("_cache"), "value", OPAQUE)
        return copy.deepcopy(value) if _plain(value) else OPAQUE
    kind = _python_type(vt)
    base = vars(vt).get("_base_vt")  # a dict or list subclass's tracker keeps the builtin part in its base
    items = _items(vt)
    if base is not None and vars(vt).get("items") is None:
        return _model(base, depth + 1)
    if kind in (list, tuple, collections.deque) and isinstance(items, (list, tuple)):
        made = [_model(v, depth + 1) for v in items]
        if kind is collections.deque:
            maxlen = vars(vt).get("maxlen")
            bound = _model(maxlen, depth + 1) if maxlen is not None else None
            return collections.deque(made, bound if isinstance(bound, int) else None)
        return kind(made)
    if kind in (dict, collections.OrderedDict) and isinstance(items, dict):
        return kind((_model(getattr(k, "vt", k), depth + 1), _model(v, depth + 1)) for k, v in items.items())
    if kind is set and isinstance(items, dict):
        return {_model(getattr(k, "vt", k), depth + 1) for k in items}
    if items is None and _constant(vt):
        try:
            value = copy.deepcopy(vt.as_python_constant())
        except Exception:  # noqa: BLE001 - a constant no copy can be made of
            return OPAQUE
        if _plain(value):  # not a function, a class, a module: each rebuilt one is another object
            return value
    return OPAQUE


_DATA = (type(None), bool, int, float, complex, str, bytes, type(Ellipsis))


def _plain(value: Any) -> bool:
    """Plain data: what compares by value after a copy."""
    if isinstance(value, _DATA):
        return True
    if isinstance(value, dict):
        return all(_plain(k) and _plain(v) for k, v in value.items())
    if isinstance(value, (list, tuple, set, frozenset, collections.deque)):
        return all(map(_plain, value))
    return False


def _constant(vt: Any) -> bool:
    try:
        return bool(vt.is_python_constant())
    except Exception:  # noqa: BLE001 - a tracker that cannot tell: not a constant
        return False


def _items(vt: Any) -> Any:
    """A container tracker's items (a list, or a dict keyed by hashable wrappers), its base's for a subclass's
    tracker; None for any other tracker."""
    vt = _real(vt)
    items = vars(vt).get("items")
    base = vars(vt).get("_base_vt")
    if items is None and base is not None:
        items = vars(_real(base)).get("items")
    return items if isinstance(items, (list, tuple, dict)) else None


def _flat(values: Any) -> list[Any]:
    """The trackers among call arguments, a list or tuple of them opened one level (`out=(a, b)`)."""
    found = []
    for v in values:
        found.extend(v if isinstance(v, (list, tuple)) else [v])
    return found


def _fake(vt: Any) -> Any:
    """The fake tensor a tensor tracker's graph node holds (what the traced op really made), or None."""
    vt = _real(vt)
    if not any(k.__name__ == "TensorVariable" for k in type(vt).__mro__):
        return None
    node = getattr(vars(vt).get("proxy"), "node", None)
    value = getattr(node, "meta", {}).get("example_value")
    return value if hasattr(value, "stride") and hasattr(value, "shape") else None


def _ints(values: Any) -> tuple | None:
    try:
        made = tuple(values)
    except Exception:  # noqa: BLE001 - no strides (a sparse tensor) or no shape
        return None
    return made if all(type(v) is int for v in made) else None  # a symbolic size: never compared (a guard)


def _meta(fake: Any) -> tuple | None:
    """(size, strides, dims) of a fake tensor when all are plain integers."""
    size = _ints(fake.shape)
    stride = _ints(fake.stride()) if size is not None else None
    return (size, stride, len(size)) if stride is not None else None


def _kept_meta(vt: Any) -> tuple | None:
    """(size, strides, dims) as the tracker keeps them (None where it keeps none)."""
    own = vars(_real(vt))
    size = own.get("_size", own.get("size"))
    stride, ndim = own.get("stride"), own.get("ndim")
    kept = (_ints(size) if size is not None else None, _ints(stride) if stride is not None else None,
            ndim if type(ndim) is int else None)
    return kept if any(k is not None for k in kept) else None


def _contents(vt: Any) -> tuple:
    """The identities of a container tracker's items (a change means its contents were written)."""
    items = _items(vt)
    if isinstance(items, dict):
        return tuple((id(getattr(k, "vt", k)), id(v)) for k, v in items.items())
    if isinstance(items, (list, tuple)):
        return tuple(map(id, items))
    return ()


def _same(a: Any, b: Any) -> bool:
    if a is OPAQUE or b is OPAQUE:
        return True
    if type(a) is not type(b):
        return False
    if isinstance(a, (set, frozenset)) and (_opaque(a) or _opaque(b)):
        return len(a) == len(b)  # a stand-in hashes as any item: set membership says nothing
    if isinstance(a, dict):
        return list(a.items()) == list(b.items())
    if isinstance(a, collections.deque):
        return list(a) == list(b) and a.maxlen == b.maxlen
    return a == b


def _opaque(value: Any) -> bool:
    if value is OPAQUE:
        return True
    if isinstance(value, dict):
        return any(_opaque(k) or _opaque(v) for k, v in value.items())
    if isinstance(value, (list, tuple, set, collections.deque)):
        return any(map(_opaque, value))
    return False


class _Checker:
    """The wrappers: each notes into `violations`; `depth` keeps a tracker's nested call_methods (a subclass
    calling its base's) to one check, at the outermost."""

    def __init__(self, violations: Violations) -> None:
        self.violations = violations
        self.active: set[int] = set()
        self.calls = 0
        self.changed: dict[int, tuple[str, int]] = {}  # fake tensor -> (the call that changed it, its entry)

    def watch(self, given: list[Any]) -> tuple[int, list[tuple[Any, tuple]]]:
        """Enter a tracker call: its stamp, and the metadata of the fake tensors of the trackers it was given."""
        self.calls += 1
        seen = []
        for vt in given:
            fake = _fake(vt)
            meta = _meta(fake) if fake is not None else None
            if meta is not None:
                seen.append((fake, meta))
        return self.calls, seen

    def moved(self, label: str, watched: tuple[int, list[tuple[Any, tuple]]]) -> None:
        """Leave a tracker call: a fake tensor whose size or strides it changed (no call inside it did) was
        changed by it."""
        stamp, seen = watched
        for fake, meta in seen:
            if _meta(fake) != meta and self.changed.get(id(fake), ("", 0))[1] <= stamp:
                self.changed[id(fake)] = (label, stamp)

    def stale(self, vt: Any) -> None:
        """A tensor tracker read after its fake tensor's size or strides changed must know them: Dynamo answers
        `.shape`, `.size()`, `.stride()` and `.numel()` from the tracker's own copy."""
        fake = _fake(vt)
        meta = _meta(fake) if fake is not None else None
        kept = _kept_meta(vt)
        if meta is None or kept is None:
            return
        if any(k is not None and k != m for k, m in zip(kept, meta)):
            where = self.changed.get(id(fake), ("an in-place change",))[0]
            self.violations.note(f"tensor size or strides stale after a change in {where}")

    def bind_args(self, fn: Any, owner: str) -> Any:
        checker = self

        def bind_args(self, parent, args, kwargs):
            result = fn(self, parent, args, kwargs)
            try:
                checker.check_binding(self, parent, result, owner)
            except Exception:  # noqa: BLE001 - an internal this torch lacks: no evidence
                pass
            return result
        return bind_args

    def check_binding(self, vt: Any, parent: Any, result: dict, owner: str) -> None:
        closure = getattr(getattr(vt, "fn", None), "__closure__", None)
        if closure:
            side_effects = parent.output.side_effects
            names = vt.fn.__code__.co_freevars
            for name, cell in zip(names, closure):
                if name in result and cell in side_effects and result[name] is not side_effects[cell]:
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
            watched = checker.watch([self, *_flat(args), *_flat(kwargs.values())])
            if id(self) in checker.active or not isinstance(name, str):
                result = fn(self, tx, name, args, kwargs)
                checker.moved(f"{owner}.call_method", watched)
                return result
            checker.active.add(id(self))
            try:
                try:
                    before = checker.before(self, name, args, kwargs)
                except Exception:  # noqa: BLE001 - nothing to compare with
                    before = None
                result = fn(self, tx, name, args, kwargs)
                checker.moved(f"{owner}.call_method", watched)
                try:
                    checker.after(self, tx, name, before, result)
                except Exception:  # noqa: BLE001 - an internal this torch lacks: no evidence
                    pass
                return result
            finally:
                checker.active.discard(id(self))
        return call_method

    @staticmethod
    def before(vt: Any, name: str, args: list, kwargs: dict) -> tuple[Any, ...] | None:
        """What the step should do, computed on a model of the container and its arguments: (contents before,
        expected contents, expected result, whether it decides the result), or None when the step is no builtin
        method of a container; expected contents None when it cannot be decided (only the written-contents
        check then runs). Items that are no constants stand in as themselves (`_Opaque`): a method that compares
        or orders items (`remove`, `index`, `sort`...) then decides nothing."""
        kind = _python_type(vt)
        if kind not in CONTAINERS or not hasattr(kind, name) or _items(vt) is None:
            return None
        shape = _contents(vt)
        try:
            real = _model(vt)
            given = [_model(a) for a in args]
            named = {k: _model(v) for k, v in kwargs.items()}
        except Exception:  # noqa: BLE001 - a tracker no model can be made of
            return (shape, None, None, False)
        opaque = _opaque(real) or _opaque(given) or _opaque(list(named.values()))
        if opaque and name not in _STRUCTURAL:
            return (shape, None, None, False)
        try:
            returned = getattr(real, name)(*given, **named)
        except Exception:  # noqa: BLE001 - Python raises here: Dynamo should too, nothing to compare
            return (shape, None, None, False)
        return (shape, real, returned, isinstance(returned, _RESULTS))

    def after(self, vt: Any, tx: Any, name: str, before: tuple[Any, ...] | None, result: Any) -> None:
        if before is None:
            return
        shape, expected, returned, decides = before
        where = f"{_owner(type(vt), 'call_method')}.call_method"
        kind = _python_type(vt)
        if expected is not None:
            if not _same(_model(vt), expected) or (decides and not _same(_model(result), returned)):
                self.violations.note(f"{kind.__name__}.{name} unlike Python in {where}")
                return
        if getattr(vt, "source", None) is not None and _contents(vt) != shape \
                and not tx.output.side_effects.is_modified(vt):
            self.violations.note(f"write to a pre-existing container not recorded in {where}")

    def var_getattr(self, fn: Any) -> Any:
        checker = self

        def var_getattr(self, tx, name):
            checker.stale(self)
            return fn(self, tx, name)
        return var_getattr

    def call_function(self, fn: Any, owner: str) -> Any:
        checker = self

        def call_function(self, tx, args, kwargs):
            watched = checker.watch([*_flat(args), *_flat(kwargs.values())])
            result = fn(self, tx, args, kwargs)
            checker.moved(f"{owner}.call_function", watched)
            target = _real(args[0]) if args and getattr(self, "fn", None) in _INPLACE else None
            if target is not None and _python_type(target) in CONTAINERS and _real(result) is not target:
                checker.violations.note(f"in-place operator made a new object in {owner}.call_function")
            return result
        return call_function


@contextmanager
def checking() -> Iterator[Violations]:
    """Check Dynamo's model steps while the block traces; every patch is undone on exit."""
    violations = Violations()
    try:
        from torch._dynamo.variables.base import VariableTracker
        from torch._dynamo.variables.tensor import TensorVariable
    except ImportError:
        yield violations
        return
    checker = _Checker(violations)
    originals: list[tuple[type, str, Any]] = []
    tensors = subclasses(TensorVariable)
    for cls in subclasses(VariableTracker):
        wrappers = {"bind_args": lambda fn, c=cls: checker.bind_args(fn, c.__name__),
                    "call_method": lambda fn, c=cls: checker.call_method(fn, c.__name__),
                    "call_function": lambda fn, c=cls: checker.call_function(fn, c.__name__)}
        if cls in tensors:
            wrappers["var_getattr"] = checker.var_getattr
        for method, wrap in wrappers.items():
            fn = vars(cls).get(method)
            if callable(fn):
                originals.append((cls, method, fn))
                setattr(cls, method, wrap(fn))
    try:
        yield violations
    finally:
        for cls, method, fn in reversed(originals):
            setattr(cls, method, fn)
