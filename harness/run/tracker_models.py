"""The Python values Dynamo's variable trackers model, read without changing what Dynamo does.

`run/model_checks.py` compares Dynamo's model steps with CPython's; this module reads the model: a container
tracker's items as a fresh Python value (`model`: plain data as itself, anything else a stand-in equal to any
item), a tensor tracker's size and strides as it keeps them (`kept_meta`) against its graph node's fake tensor
(`meta` of `fake_of`). Nothing here realizes a lazy tracker (that would install guards) or guards a symbolic size:
what cannot be read without changing the trace is not read. It reads private attributes of torch's trackers
(`items`, `_base_vt`, `_cache`, `proxy`, `_size` or `size`, `stride`, `ndim`), which torch 2.5 through 2.14 have.
"""
from __future__ import annotations

import collections
import copy
from typing import Any

CONTAINERS = (list, dict, set, collections.deque, collections.OrderedDict, collections.defaultdict)


_LAZY = "LazyVariableTracker"


def realized(vt: Any) -> Any:
    """A lazily built tracker's tracker when it was realized, else the lazy one: a check never realizes a tracker
    (that installs guards, and would change what it checks)."""
    if type(vt).__name__ == _LAZY:
        realized = getattr(vars(vt).get("_cache"), "vt", None)
        return realized if realized is not None else vt
    return vt


def python_type(vt: Any) -> type | None:
    vt = realized(vt)
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


def model(vt: Any, depth: int = 0) -> Any:
    """The Python value a tracker models, built afresh: a list, tuple, dict, set or deque tracker as that container
    of its items' models; plain data (a constant, or a lazy tracker's value) as itself; anything else `OPAQUE`."""
    if depth > 4:
        raise _Undecidable
    if type(vt).__name__ == _LAZY:  # its value, peeked at: the same before and after it is realized
        value = getattr(vars(vt).get("_cache"), "value", OPAQUE)
        return copy.deepcopy(value) if plain(value) else OPAQUE
    kind = python_type(vt)
    base = vars(vt).get("_base_vt")  # a dict or list subclass's tracker keeps the builtin part in its base
    items = items_of(vt)
    if base is not None and vars(vt).get("items") is None:
        return model(base, depth + 1)
    if kind in (list, tuple, collections.deque) and isinstance(items, (list, tuple)):
        made = [model(v, depth + 1) for v in items]
        if kind is collections.deque:
            maxlen = vars(vt).get("maxlen")
            bound = model(maxlen, depth + 1) if maxlen is not None else None
            return collections.deque(made, bound if isinstance(bound, int) else None)
        return kind(made)
    if kind in (dict, collections.OrderedDict) and isinstance(items, dict):
        return kind((model(getattr(k, "vt", k), depth + 1), model(v, depth + 1)) for k, v in items.items())
    if kind is set and isinstance(items, dict):
        return {model(getattr(k, "vt", k), depth + 1) for k in items}
    if items is None and _constant(vt):
        try:
            value = copy.deepcopy(vt.as_python_constant())
        except Exception:  # noqa: BLE001 - a constant no copy can be made of
            return OPAQUE
        if plain(value):  # not a function, a class, a module: each rebuilt one is another object
            return value
    return OPAQUE


_DATA = (type(None), bool, int, float, complex, str, bytes, type(Ellipsis))


def plain(value: Any) -> bool:
    """Plain data: what compares by value after a copy."""
    if isinstance(value, _DATA):
        return True
    if isinstance(value, dict):
        return all(plain(k) and plain(v) for k, v in value.items())
    if isinstance(value, (list, tuple, set, frozenset, collections.deque)):
        return all(map(plain, value))
    return False


def _constant(vt: Any) -> bool:
    try:
        return bool(vt.is_python_constant())
    except Exception:  # noqa: BLE001 - a tracker that cannot tell: not a constant
        return False


def items_of(vt: Any) -> Any:
    """A container tracker's items (a list, or a dict keyed by hashable wrappers), its base's for a subclass's
    tracker; None for any other tracker."""
    vt = realized(vt)
    items = vars(vt).get("items")
    base = vars(vt).get("_base_vt")
    if items is None and base is not None:
        items = vars(realized(base)).get("items")
    return items if isinstance(items, (list, tuple, dict)) else None


def flat(values: Any) -> list[Any]:
    """The trackers among call arguments, a list or tuple of them opened one level (`out=(a, b)`)."""
    found = []
    for v in values:
        found.extend(v if isinstance(v, (list, tuple)) else [v])
    return found


def fake_of(vt: Any) -> Any:
    """The fake tensor a tensor tracker's graph node holds (what the traced op really made), or None."""
    vt = realized(vt)
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


def meta(fake: Any) -> tuple | None:
    """(size, strides, dims) of a fake tensor when all are plain integers."""
    size = _ints(fake.shape)
    stride = _ints(fake.stride()) if size is not None else None
    return (size, stride, len(size)) if stride is not None else None


def kept_meta(vt: Any) -> tuple | None:
    """(size, strides, dims) as the tracker keeps them (None where it keeps none)."""
    own = vars(realized(vt))
    size = own.get("_size", own.get("size"))
    stride, ndim = own.get("stride"), own.get("ndim")
    kept = (_ints(size) if size is not None else None, _ints(stride) if stride is not None else None,
            ndim if type(ndim) is int else None)
    return kept if any(k is not None for k in kept) else None


def contents(vt: Any) -> tuple:
    """The identities of a container tracker's items (a change means its contents were written)."""
    items = items_of(vt)
    if isinstance(items, dict):
        return tuple((id(getattr(k, "vt", k)), id(v)) for k, v in items.items())
    if isinstance(items, (list, tuple)):
        return tuple(map(id, items))
    return ()


def same(a: Any, b: Any) -> bool:
    if a is OPAQUE or b is OPAQUE:
        return True
    if type(a) is not type(b):
        return False
    if isinstance(a, (set, frozenset)) and (opaque(a) or opaque(b)):
        return len(a) == len(b)  # a stand-in hashes as any item: set membership says nothing
    if isinstance(a, dict):
        return list(a.items()) == list(b.items())
    if isinstance(a, collections.deque):
        return list(a) == list(b) and a.maxlen == b.maxlen
    return a == b


def opaque(value: Any) -> bool:
    if value is OPAQUE:
        return True
    if isinstance(value, dict):
        return any(opaque(k) or opaque(v) for k, v in value.items())
    if isinstance(value, (list, tuple, set, collections.deque)):
        return any(map(opaque, value))
    return False
