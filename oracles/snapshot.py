"""State snapshots: a structural, aliasing-aware picture of everything a program can see.

This module imports only torch and the standard library: dynfuzz inlines its
text into standalone repro scripts, so a saved finding needs nothing else.

Note [Why a snapshot records aliasing]
A compiler that replays a mutation onto a copy instead of the original object
produces the same values in two places where eager had one object seen twice.
So the walk is memoised by `id()`: the second time an object is reached it is
recorded as `("@", k)`, the index of its first visit; tensors record a storage
tag (the index of the first tensor seen on that storage) instead of an address,
so two runs with different allocations compare equal when, and only when, they
share storage the same way.
"""
import logging
import math

import torch

# A logger is process-wide library state: torch's own logging fills its manager's caches whenever it
# compiles, so walking into a program's logger compared torch internals, not the program's state.
_SKIP_TYPES = (type(math), logging.Logger, logging.Manager)


class TensorSnap:
    """Metadata and a CPU copy of a tensor's values, compared with dtype-aware tolerance."""

    __slots__ = ("meta", "data", "grad", "attrs")

    def __init__(self, meta, data, grad, attrs):
        self.meta, self.data, self.grad, self.attrs = meta, data, grad, attrs

    def __repr__(self):
        return "tensor(%s)" % ", ".join("%s=%s" % kv for kv in self.meta.items())


def _is_user_code(fn, filename_prefix):
    code = getattr(fn, "__code__", None)
    return code is not None and code.co_filename.startswith(filename_prefix)


class Snapshotter:
    """Walk values from one root; `user_prefix` marks code objects that belong to the program.

    `known_tensors` (ids of tensors that existed before the call) limits the
    `mutated` aspect to those: a tensor created inside the call may legitimately
    be computed out of place by one backend and in place by another.
    """

    def __init__(self, user_prefix="<dynfuzz", user_module="dynfuzz_program", known_tensors=None):
        self.user_prefix, self.user_module = user_prefix, user_module
        self.known_tensors = known_tensors
        self.tensor_ids = set()
        self.seen = {}
        self.storages = {}
        self.keep = []  # keep walked objects alive so ids are not reused mid-walk

    def take(self, value):
        return self.walk(value)

    def walk(self, v):
        if v is None or isinstance(v, (bool, int, str, bytes, complex)):
            return v
        if isinstance(v, float):
            return ("float", v)
        key = id(v)
        if key in self.seen and not isinstance(v, tuple):
            return ("@", self.seen[key])
        if not isinstance(v, tuple):
            self.seen[key] = len(self.seen)
            self.keep.append(v)
        if isinstance(v, torch.Tensor):
            return self.tensor(v)
        if isinstance(v, (torch.dtype, torch.device, torch.Size)):
            return ("torch", str(v))
        tname = type(v).__qualname__
        if isinstance(v, tuple):
            return ("tuple", tname, [self.walk(x) for x in v]) + self.extra(v, tuple)
        if isinstance(v, list):
            return ("list", tname, [self.walk(x) for x in v]) + self.extra(v, list)
        if isinstance(v, bytearray):
            return ("bytearray", bytes(v))
        if isinstance(v, dict):
            items = [(self.key(k), self.walk(x)) for k, x in v.items()]
            extra = ("default_factory", getattr(v.default_factory, "__qualname__", None)) \
                if hasattr(v, "default_factory") else ()
            return ("dict", tname, items, extra) + self.extra(v, dict)
        if isinstance(v, (set, frozenset)):
            return ("set", tname, sorted((self.key(x) for x in v), key=repr)) + self.extra(v, (set, frozenset))
        if type(v).__name__ == "deque":
            return ("deque", tname, v.maxlen, [self.walk(x) for x in v])
        if type(v).__name__ == "cell":
            try:
                return ("cell", self.walk(v.cell_contents))
            except ValueError:
                return ("cell", "<empty>")
        if tname == "ndarray" and hasattr(v, "tolist"):
            return ("ndarray", str(v.dtype), tuple(v.shape), repr(v.tolist()))
        if tname in _POSITIONED_ITERATORS:
            return ("iterator", tname, _iterator_position(v))
        if callable(v) and hasattr(v, "__code__"):
            return self.function(v)
        if isinstance(v, type):
            return self.klass(v)
        if isinstance(v, _SKIP_TYPES) or callable(v) and not hasattr(v, "__dict__"):
            return ("opaque", getattr(v, "__qualname__", getattr(v, "__name__", tname)))
        if type(v).__name__ == "partial":
            return ("partial", self.walk(v.func), [self.walk(a) for a in v.args],
                    [(k, self.walk(x)) for k, x in v.keywords.items()])
        if type(v).__name__ == "RemovableHandle":
            return ("handle",)
        if type(v).__name__ == "method":
            return ("method", self.walk(v.__func__), self.walk(v.__self__))
        return ("obj", tname, self.attrs(v) + self.slots(v))

    def key(self, k):
        """Dict keys and set members: hashable values, with tensors by identity order."""
        if isinstance(k, torch.Tensor):
            return self.walk(k)
        if isinstance(k, float):
            return ("float", k)
        return k

    def extra(self, v, base):
        """Instance attributes of container subclasses (a list subclass with a counter, say)."""
        if type(v) in (tuple, list, dict, set, frozenset) or not hasattr(v, "__dict__"):
            return ()
        return (self.attrs(v),)

    def attrs(self, v):
        d = getattr(v, "__dict__", None)
        if not isinstance(d, dict):
            return []
        return [(k, self.walk(x)) for k, x in d.items()]

    def slots(self, v):
        """Values held in `__slots__` (no `__dict__` holds them), by slot name."""
        names = []
        for klass in type(v).__mro__:
            declared = klass.__dict__.get("__slots__", ())
            names += [declared] if isinstance(declared, str) else [n for n in declared if n not in names]
        return [(n, self.walk(getattr(v, n))) for n in names if n not in ("__dict__", "__weakref__") and hasattr(v, n)]

    def function(self, fn):
        qual = fn.__qualname__
        if not _is_user_code(fn, self.user_prefix):
            return ("fn", qual)
        cells = [(n, self.walk(c)) for n, c in zip(fn.__code__.co_freevars, fn.__closure__ or ())]
        defaults = self.walk(fn.__defaults__) if fn.__defaults__ else None
        kwdefaults = self.walk(fn.__kwdefaults__) if fn.__kwdefaults__ else None
        return ("fn", qual, cells, defaults, kwdefaults, self.attrs(fn))

    def klass(self, cls):
        if cls.__module__ != self.user_module:
            return ("class", cls.__qualname__)
        body = [(k, self.walk(x)) for k, x in vars(cls).items() if not (k.startswith("__") and k.endswith("__"))]
        return ("class", cls.__qualname__, body)

    def tensor(self, t):
        self.tensor_ids.add(id(t))
        if t.is_sparse or t.layout != torch.strided:
            return ("tensor-other", str(t.layout))
        try:
            storage = t.untyped_storage()
            skey = (storage.data_ptr(), storage.nbytes()) if storage.nbytes() else ("empty", id(storage))
        except (RuntimeError, NotImplementedError):
            # no data behind it: a FakeTensor or a functorch wrapper a torch bug let out of tracing (a
            # strictly exported autograd.grad under trace_autograd_ops returned one); what a program sees
            # then differs from any real tensor, which the oracles report
            return ("tensor-without-data", type(t).__qualname__, tuple(t.shape), str(t.dtype).replace("torch.", ""))
        tag = self.storages.setdefault(skey, len(self.storages))
        meta = {
            "type": type(t).__qualname__,
            "shape": tuple(t.shape),
            "stride": tuple(t.stride()),
            "offset": t.storage_offset(),
            "dtype": str(t.dtype).replace("torch.", ""),
            "device": t.device.type,
            "requires_grad": t.requires_grad,
            "is_leaf": t.is_leaf,
            "contiguous": t.is_contiguous(),
            "mutated": t._version > 0 if self.known_tensors is None or id(t) in self.known_tensors else None,
            "storage": tag,
            "view": t._is_view(),
        }
        # A gradient is walked on its own, so whether backward produced one never renumbers the storages
        # and objects of program-visible state (gradients are compared by the grads oracle).
        grad = Snapshotter(self.user_prefix, self.user_module).take(t.grad) \
            if t.is_leaf and t.grad is not None else None
        attrs = self.attrs(t)
        data = t.detach().to("cpu", copy=True)
        if type(data) is not torch.Tensor:  # a subclass's type is in meta; values compare as plain tensors
            data = data.as_subclass(torch.Tensor)
        return TensorSnap(meta, data, grad, attrs)


# Iterators over numbers whose position is program state (the next value they give), read without advancing.
_POSITIONED_ITERATORS = ("count", "range_iterator", "longrange_iterator")


def _iterator_position(it) -> str:
    """`count(3, 2)` for itertools.count; a range iterator's range and index from its pickle state."""
    return repr(it) if type(it).__name__ == "count" else repr(it.__reduce__()[1:])


# Note [An object the snapshot cannot read]
# A snapshot that raises is dynfuzz's own gap (a harness error), unless torch put the object there: a compiled
# run can leave in program state, or return, an object eager never makes (a FakeTensor or a functorch wrapper
# let out of tracing) which the walk cannot read. So the compiled run's snapshot is taken again, tolerantly, when
# it raises: each object whose walk raises becomes `("unreadable", type, error)` at its own path. `diff` then
# compares it by type name with what eager has at the same path: another type is a `type` difference, which the
# oracles judge like any other (a torch divergence); the same type is recorded in `Diffs.unreadable` as
# unexplained, and the judge turns the case into the harness error it was.
class TolerantSnapshotter(Snapshotter):
    """A walk in which an object whose own walk raises is recorded as unreadable, not the end of the walk."""

    def walk(self, v):
        try:
            return Snapshotter.walk(self, v)
        except Exception as e:
            return ("unreadable", type(v).__qualname__, "%s: %s" % (type(e).__name__, str(e)[:200]))


def take(root, user_prefix="<dynfuzz", user_module="dynfuzz_program", known_tensors=None, tolerant=False):
    """A snapshot of `root` (usually a dict of args, outputs and program globals); `tolerant`: see Note [An
    object the snapshot cannot read]."""
    walker = TolerantSnapshotter if tolerant else Snapshotter
    return walker(user_prefix, user_module, known_tensors).take(root)


def type_name(node):
    """The type a snapshot node was taken of, as `type(x).__qualname__` (the kind for nodes without one)."""
    if isinstance(node, TensorSnap):
        return node.meta["type"]
    if isinstance(node, tuple) and node and isinstance(node[0], str):
        if node[0] in ("unreadable", "tuple", "list", "dict", "set", "deque", "obj", "tensor-without-data",
                       "iterator", "class"):
            return node[1] if len(node) > 1 else node[0]
        return node[0]
    return type(node).__qualname__


def take_tracked(root, user_prefix="<dynfuzz", user_module="dynfuzz_program"):
    """A snapshot plus the ids of the tensors it reached (the `known_tensors` of a later snapshot)."""
    walker = Snapshotter(user_prefix, user_module)
    return walker.take(root), walker.tensor_ids


def tolerance(dtype):
    """(rtol, atol) for comparing values computed by differently-fused kernels."""
    if dtype in (torch.float16, torch.bfloat16):
        return 1e-2, 1e-2
    if dtype in (torch.float32, torch.complex64):
        return 1e-4, 1e-5
    if dtype in (torch.float64, torch.complex128):
        return 1e-7, 1e-7
    return 0.0, 0.0


def values_close(a, b, tol=None):
    """NaN-equal, dtype-aware closeness of two same-shape CPU tensors (`tol`: dtype -> (rtol, atol))."""
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    if not a.dtype.is_floating_point and not a.dtype.is_complex:
        return bool(torch.equal(a, b))
    rtol, atol = (tol or tolerance)(a.dtype)
    return bool(torch.allclose(a, b, rtol=rtol, atol=atol, equal_nan=True))


_BUILTIN_CONTAINERS = {"list", "tuple", "dict", "set", "frozenset", "deque", "OrderedDict", "defaultdict"}


class Diffs(list):
    """The differences found, plus `kinds`: for each container path reached, what kind of container it is
    (`set`, `set-subclass`, `deque-maxlen`...), which tells apart bugs that diverge at the same path shape.
    `tolerance` (dtype -> (rtol, atol)), when given, replaces `tolerance()` for the values compared into it."""

    def __init__(self, tolerance=None):
        super().__init__()
        self.kinds = {}
        self.tolerance = tolerance
        self.unreadable = []  # (path, expected type, actual type): unreadable nodes of the same type on both sides


def without_grads(diffs, limit=20):
    """The differences outside `.grad` paths (gradients are the grads oracle's), kinds kept."""
    kept = Diffs()
    kept.extend([d for d in diffs if not d[0].endswith(".grad")][:limit])
    kept.kinds.update(getattr(diffs, "kinds", {}))
    return kept


def container_kind(node):
    """`list`, `set-subclass`, `deque-maxlen`, `obj`...: the kind of a snapshot container node."""
    kind = node[0]
    if kind == "obj":
        return "obj"
    qualifier = "" if node[1] in _BUILTIN_CONTAINERS else "-subclass"
    if kind == "deque" and node[2] is not None:
        qualifier += "-maxlen"
    return kind + qualifier


def _entry_path(path, k, i):
    """The path of a dict entry: `[key]` for a key the program could write, `.<values>[i]` (its position) for
    a key the snapshot encoded (an object seen before, a tensor): an optimizer's state is keyed by parameters."""
    if isinstance(k, tuple) and k[:1] == ("float",):
        return "%s[%r]" % (path, k[1])
    if isinstance(k, TensorSnap) or isinstance(k, tuple) and k[:1] in (("@",), ("tensor-other",),
                                                                      ("tensor-without-data",)):
        return "%s.<values>[%d]" % (path, i)
    return "%s[%r]" % (path, k)


def diff(expected, actual, path="", out=None, limit=20):
    """Differences between two snapshots, as `(path, aspect, expected, actual)` tuples (in a `Diffs`)."""
    out = Diffs() if out is None else out
    if len(out) >= limit:
        return out
    e, a = expected, actual
    if isinstance(e, TensorSnap) and isinstance(a, TensorSnap):
        for k in e.meta:
            if e.meta[k] != a.meta.get(k) and not (k == "mutated" and None in (e.meta[k], a.meta.get(k))) \
                    and not (k == "stride" and same_layout(e.meta["shape"], e.meta[k], a.meta.get(k))):
                out.append((path, k, e.meta[k], a.meta.get(k)))
        if e.meta["shape"] == a.meta["shape"] and e.meta["dtype"] == a.meta["dtype"] \
                and not values_close(e.data, a.data, getattr(out, "tolerance", None)):
            out.append((path, "values", _short(e.data), _short(a.data)))
        diff(e.grad, a.grad, path + ".grad", out, limit)
        _diff_attrs(e.attrs, a.attrs, path, out, limit)
        return out
    if "unreadable" in (_kind(e), _kind(a)):  # Note [An object the snapshot cannot read]
        if type_name(e) != type_name(a):
            out.append((path, "type", type_name(e), type_name(a)))
        elif isinstance(out, Diffs) and e != a:
            out.unreadable.append((path, type_name(e), type_name(a)))
        return out
    if _kind(e) != _kind(a):
        out.append((path, "type", _describe(e), _describe(a)))
        return out
    kind = _kind(e)
    if kind in ("tuple", "list", "deque", "dict", "set", "obj") and isinstance(out, Diffs):
        out.kinds[path] = container_kind(e)
    if kind == "scalar":
        if e != a:
            out.append((path, "value", e, a))
    elif kind == "float":
        if not _floats_close(e[1], a[1]):
            out.append((path, "value", e[1], a[1]))
    elif kind == "@":
        if e != a:
            out.append((path, "identity", "same object as #%d" % e[1], "same object as #%d" % a[1]))
    elif kind in ("tuple", "list", "deque"):
        _diff_named(e, a, path, out)
        if kind == "deque" and e[2] != a[2]:
            out.append((path, "maxlen", e[2], a[2]))
        items_e, items_a = (e[3], a[3]) if kind == "deque" else (e[2], a[2])
        if len(items_e) != len(items_a):
            out.append((path, "length", len(items_e), len(items_a)))
        for i, (x, y) in enumerate(zip(items_e, items_a)):
            diff(x, y, "%s[%d]" % (path, i), out, limit)
        if kind != "deque":
            _diff_extra_attrs(e, a, 3, path, out, limit)
    elif kind == "dict":
        _diff_named(e, a, path, out)
        keys_e, keys_a = [k for k, _ in e[2]], [k for k, _ in a[2]]
        if keys_e != keys_a:
            out.append((path, "keys", keys_e, keys_a))
        vals_a = dict((repr(k), v) for k, v in a[2])
        for i, (k, v) in enumerate(e[2]):
            if repr(k) in vals_a:
                diff(v, vals_a[repr(k)], _entry_path(path, k, i), out, limit)
        if e[3] != a[3]:
            out.append((path, "default_factory", e[3], a[3]))
        _diff_extra_attrs(e, a, 4, path, out, limit)
    elif kind == "set":
        _diff_named(e, a, path, out)
        if e[2] != a[2]:
            out.append((path, "members", e[2], a[2]))
        _diff_extra_attrs(e, a, 3, path, out, limit)
    elif kind == "cell":
        diff(e[1], a[1], path + ".cell_contents", out, limit)
    elif kind == "fn":
        if e[1] != a[1] or len(e) != len(a):
            out.append((path, "function", e[1], a[1]))
        elif len(e) > 2:
            _diff_attrs(e[2], a[2], path + ".<cells>", out, limit)
            diff(e[3], a[3], path + ".__defaults__", out, limit)
            diff(e[4], a[4], path + ".__kwdefaults__", out, limit)
            _diff_attrs(e[5], a[5], path, out, limit)
    elif kind == "class":
        if e[1] != a[1] or len(e) != len(a):
            out.append((path, "class", e[1], a[1]))
        elif len(e) > 2:
            _diff_attrs(e[2], a[2], path, out, limit)
    elif kind == "obj":
        _diff_named(e, a, path, out)
        _diff_attrs(e[2], a[2], path, out, limit)
    elif e != a:
        out.append((path, kind, _describe(e), _describe(a)))
    return out


def same_layout(shape, stride_a, stride_b):
    """Whether two strides lay out `shape` the same way: the stride of a dimension of size 0 or 1 is never
    used to address an element, so it may differ (as in torch._prims_common.check_significant_strides)."""
    if stride_b is None or len(stride_a) != len(stride_b):
        return False
    if 0 in shape:
        return True
    return all(x == y for n, x, y in zip(shape, stride_a, stride_b) if n > 1)


def _kind(v):
    if isinstance(v, TensorSnap):
        return "tensor"
    if isinstance(v, tuple) and v and isinstance(v[0], str):
        return v[0]
    return "scalar"


def _diff_named(e, a, path, out):
    if e[1] != a[1]:
        out.append((path, "type", e[1], a[1]))


def _diff_extra_attrs(e, a, at, path, out, limit):
    """Instance attributes of two container snapshots, kept at index `at` only when the container's type
    has a `__dict__`: an OrderedDict that compiled code turned into a plain dict has none on one side
    (torch 2.5.1, `C |= {...}` on a global OrderedDict), so a missing entry is an empty attribute list."""
    if len(e) > at or len(a) > at:
        _diff_attrs(e[at] if len(e) > at else [], a[at] if len(a) > at else [], path, out, limit)


def _diff_attrs(e, a, path, out, limit):
    """Attribute sets, then (only when the sets agree) their insertion order, then each value.

    `vars(obj)` order is program-visible state (`list(vars(obj))`, `__dict__` iteration, repr), so the
    same attributes in another order are a divergence of their own, `attribute-order`.
    """
    names_e, names_a = [k for k, _ in e], [k for k, _ in a]
    if sorted(names_e) != sorted(names_a):
        out.append((path, "attributes", names_e, names_a))
    elif names_e != names_a:
        out.append((path, "attribute-order", names_e, names_a))
    other = dict(a)
    for k, v in e:
        if k in other:
            diff(v, other[k], "%s.%s" % (path, k) if path else k, out, limit)


def _floats_close(a, b):
    if math.isnan(a) and math.isnan(b):
        return True
    if a == 0.0 and b == 0.0:
        return math.copysign(1, a) == math.copysign(1, b)
    return math.isclose(a, b, rel_tol=1e-4, abs_tol=1e-5)


def _describe(v):
    if isinstance(v, TensorSnap):
        return "tensor"
    if isinstance(v, tuple) and v and v[0] == "iterator":
        return f"{v[1]} at {v[2]}"
    if isinstance(v, tuple) and v and isinstance(v[0], str):
        return v[0] + ("(%s)" % v[1] if len(v) > 1 and isinstance(v[1], str) else "")
    return repr(v)[:60]


def _short(t, n=6):
    flat = t.reshape(-1)[:n].tolist()
    return "%s%s" % (flat, "..." if t.numel() > n else "")
