"""The recorder: builds one CallTrace while the interpreter runs.

It knows where every value read from outside the call came from (its source,
`L['x']`, `G['n']`, `G['obj'].attr`), turns each such read into the guard a
correct compiler needs, gives input sizes and scalars sympy symbols, logs
writes to objects that existed before the call, and numbers tensors so ops can
be replayed.
"""
from __future__ import annotations

import math
import re
import types
from collections import deque
from typing import Any

import sympy
import torch

from .observer import Observer
from .symbolic import SymInt, is_symbolic, symbol
from .trace import CallTrace, Effect, Guard, In, Op, Ref

SCALARS = (bool, int, float, str, type(None), complex)
CONTAINER_MUTATORS = {
    "list": {"append", "extend", "insert", "pop", "remove", "clear", "sort", "reverse", "__setitem__",
             "__delitem__", "__iadd__"},
    "dict": {"update", "pop", "popitem", "clear", "setdefault", "__setitem__", "__delitem__", "move_to_end"},
    "set": {"add", "discard", "remove", "pop", "clear", "update", "difference_update",
            "intersection_update", "symmetric_difference_update"},
    "deque": {"append", "appendleft", "extend", "extendleft", "pop", "popleft", "remove", "clear", "rotate",
              "insert", "reverse"},
    "bytearray": {"append", "extend", "insert", "pop", "remove", "clear", "reverse"},
}
TENSOR_META_METHODS = {"resize_", "resize_as_", "t_", "transpose_", "unsqueeze_", "squeeze_", "as_strided_",
                       "set_", "swapdims_", "swapaxes_", "requires_grad_", "retain_grad", "register_hook",
                       "detach_"}


def _container_kind(obj: Any) -> str | None:
    for kind, cls in (("list", list), ("dict", dict), ("set", set), ("deque", deque), ("bytearray", bytearray)):
        if isinstance(obj, cls):
            return kind
    return None


class Recorder(Observer):
    """Provenance, guards, effects, breaks and ops of one traced call: the interpreter's observer while tracing."""

    def __init__(self) -> None:
        self.trace = CallTrace()
        self.keep: list[Any] = []
        self.origins: dict[int, str] = {}
        self.fresh_ids: set[int] = set()
        self.cell_sources: dict[int, str] = {}
        self.sizes: dict[int, list[Any]] = {}
        self.refs: dict[int, Any] = {}
        self._guarded: set[tuple[str, str]] = set()

    # ---- provenance and guards -----------------------------------------------------------------------
    def _hold(self, obj: Any) -> None:
        self.keep.append(obj)

    def fresh(self, obj: Any) -> Any:
        self._hold(obj)
        self.fresh_ids.add(id(obj))
        return obj

    def cell_source(self, cell: types.CellType, src: str) -> None:
        self._hold(cell)
        self.cell_sources[id(cell)] = src

    def guard(self, kind: str, src: str, expected: Any, text: str) -> None:
        if (kind, src) not in self._guarded:
            self._guarded.add((kind, src))
            self.trace.guards.append(Guard(kind, src, expected, text))

    def input(self, name: str, value: Any, index: int) -> Any:
        """Guard an argument of the traced call; scalar arguments come back as symbols."""
        self.read(value, f"L[{name!r}]", path=(index,))
        return self.symbolic_read(value, f"L[{name!r}]")

    def read(self, value: Any, src: str, path: tuple | None = None) -> None:
        """Guard what a correct compiler must check about `value`, read from `src` outside the call."""
        if id(value) in self.fresh_ids:
            return
        if isinstance(value, SCALARS):
            self.guard("CONST", src, value, f"{src} == {value!r}")
            return
        if isinstance(value, types.ModuleType):
            return
        self._hold(value)
        first = self.origins.setdefault(id(value), src)
        if first != src and (isinstance(value, torch.Tensor) or path is not None):
            self.guard("ALIAS", src, first, f"{src} is {first}")
        if isinstance(value, torch.Tensor):
            self.tensor_guard(value, src)
            if path is not None:
                self.refs.setdefault(id(value), In(path))
            return
        if isinstance(value, (types.FunctionType, types.BuiltinFunctionType, type, types.MethodType)):
            self.guard("ID", src, id(value), f"___check_obj_id({src}, {getattr(value, '__qualname__', '?')})")
            for i, cell in enumerate(getattr(value, "__closure__", None) or ()):
                if id(cell) not in self.cell_sources:
                    self.cell_source(cell, f"{src}.__closure__[{i}].cell_contents")
            return
        self.guard("TYPE", src, type(value).__qualname__, f"___check_type_id({src}, {type(value).__qualname__})")
        if isinstance(value, (tuple, list)) and path is not None:
            for i, item in enumerate(value):
                self.read(item, f"{src}[{i}]", (*path, i))

    def tensor_guard(self, t: torch.Tensor, src: str) -> None:
        syms = [symbol(f"{_ident(src)}_{d}", n, positive=True) for d, n in enumerate(t.shape)]
        for d, s in enumerate(syms):
            self.trace.symbols[str(s.expr)] = f"{src}.size()[{d}]"
        self.sizes.setdefault(id(t), syms)
        expected = {"dtype": t.dtype, "device": t.device.type, "requires_grad": t.requires_grad,
                    "shape": tuple(t.shape)}
        text = (f"check_tensor({src}, {type(t).__name__}, {t.dtype}, device={t.device.type}, "
                f"requires_grad={t.requires_grad}, size={list(t.shape)})")
        self.guard("TENSOR", src, expected, text)

    def read_global(self, name: str, value: Any) -> Any:
        src = f"G[{name!r}]"
        self.read(value, src)
        return self.symbolic_read(value, src)

    def read_cell(self, cell: types.CellType, value: Any) -> Any:
        """A read through a cell; guarded only when the cell is reachable from outside the call."""
        src = self.cell_sources.get(id(cell))
        if src is None:
            return value
        self.read(value, src)
        return self.symbolic_read(value, src)

    def write_cell(self, cell: types.CellType, name: str, detail: str, line: int) -> None:
        self.effect("cell", self.cell_sources.get(id(cell), name), detail, line)

    def symbolic_read(self, value: Any, src: str) -> Any:
        """Scalars read from globals and cells become symbols, so relations over them are recorded too."""
        if isinstance(value, (int, float)) and not isinstance(value, bool) and not is_symbolic(value):
            s = symbol(_ident(src), value)
            self.trace.symbols[str(s.expr)] = src
            return s
        return value

    def attribute(self, obj: Any, attr: str, value: Any) -> Any:
        src = self.origins.get(id(obj))
        if src is None or isinstance(obj, types.ModuleType) or id(obj) in self.fresh_ids:
            return value
        if isinstance(value, (types.MethodType, types.BuiltinMethodType)) and getattr(value, "__self__", None) is obj:
            return value
        self.read(value, f"{src}.{attr}")
        return value

    def item(self, obj: Any, key: Any, value: Any) -> Any:
        src = self.origins.get(id(obj))
        if src is None or id(obj) in self.fresh_ids:
            return value
        self.read(value, f"{src}[{key!r}]")
        return value

    def iterated(self, value: Any) -> None:
        src = self.origins.get(id(value))
        if src is not None and isinstance(value, (list, tuple, dict, set, deque)):
            self.guard("LEN", src, len(value), f"len({src}) == {len(value)}")

    # ---- symbolic sizes -------------------------------------------------------------------------------
    def sym_sizes(self, obj: Any) -> list[Any] | None:
        """Symbolic sizes of a tensor or Size, unless a metadata mutation has since changed the shape."""
        syms = self.sizes.get(id(obj))
        if syms is None:
            return None
        shape = obj.shape if isinstance(obj, torch.Tensor) else obj
        return syms if tuple(int(s) for s in syms) == tuple(shape) else None

    def shape_of(self, t: torch.Tensor, size: torch.Size) -> torch.Size:
        syms = self.sym_sizes(t)
        if syms is not None:
            self._hold(size)
            self.sizes[id(size)] = syms
        return size

    def tensor_query(self, t: torch.Tensor, name: str, args: tuple) -> Any:
        syms = self.sym_sizes(t)
        if syms is None:
            return None
        if name == "size":
            return syms[args[0]] if args else self.shape_of(t, t.size())
        if name == "numel":
            value = math.prod(int(s) for s in syms)
            return SymInt(value, sympy.Mul(*[s.expr for s in syms])) if syms else 1
        return None

    def relation(self, rel: Any, line: int) -> None:
        if rel is None or rel in (sympy.true, sympy.false):
            return
        text = str(rel)
        for name, src in sorted(self.trace.symbols.items(), key=lambda kv: -len(kv[0])):
            text = re.sub(rf"\b{re.escape(name)}\b", src, text)
        self.guard("RELATION", str(rel), rel, text)

    def loop_count(self, args: tuple, line: int) -> None:
        for a in args:
            if is_symbolic(a):
                self.relation(sympy.Eq(a.expr, int(a), evaluate=False), line)

    # ---- effects and breaks ---------------------------------------------------------------------------
    def effect(self, kind: str, target: str, detail: str, line: int) -> None:
        self.trace.effects.append(Effect(kind, target, detail, line))

    def mutation(self, obj: Any, kind: str | None, detail: str, line: int) -> None:
        if kind is None:
            kind = "tensor-data" if isinstance(obj, torch.Tensor) else (_container_kind(obj) or "attr")
        fresh = id(obj) in self.fresh_ids
        target = self.origins.get(id(obj)) or (f"<new {type(obj).__name__}>" if fresh else f"<{type(obj).__name__}>")
        self.effect(kind, target, detail, line)

    def method_effect(self, obj: Any, name: str, line: int) -> None:
        if isinstance(obj, torch.Tensor):
            if name in TENSOR_META_METHODS:
                self.mutation(obj, "tensor-meta", f".{name}()", line)
            elif name.endswith("_") and not name.startswith("_"):
                self.mutation(obj, "tensor-data", f".{name}()", line)
            return
        kind = _container_kind(obj)
        if kind and name in CONTAINER_MUTATORS[kind]:
            self.mutation(obj, kind, f".{name}()", line)

    def graph_break(self, reason: str, line: int) -> None:
        self.trace.breaks.append(f"line {line}: {reason}")

    # ---- ops --------------------------------------------------------------------------------------------
    def op(self, fn: Any, args: tuple, kwargs: dict, result: Any, line: int) -> None:
        if not (_has_tensor(args) or _has_tensor(kwargs) or _has_tensor(result)):
            return
        owner = getattr(fn, "__self__", None)
        if isinstance(owner, torch.Tensor) and isinstance(fn, types.BuiltinMethodType):
            fn, args = getattr(torch.Tensor, fn.__name__), (owner, *args)
        k = len(self.trace.ops)
        name = getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None) or type(fn).__name__
        self.trace.ops.append(Op(name, fn, self._refer(args), self._refer(kwargs), line))
        self._register(result, k, ())

    def _refer(self, v: Any) -> Any:
        if isinstance(v, torch.Tensor):
            return self.refs.get(id(v), v)
        if type(v) in (tuple, list):
            return type(v)(self._refer(x) for x in v)
        if type(v) is dict:
            return {k: self._refer(x) for k, x in v.items()}
        return v

    def _register(self, v: Any, k: int, path: tuple) -> None:
        if isinstance(v, torch.Tensor):
            self._hold(v)
            self.refs.setdefault(id(v), Ref(k, path))
        elif isinstance(v, (tuple, list)):
            for i, x in enumerate(v):
                self._register(x, k, (*path, i))

    def output_refs(self, out: Any) -> None:
        self.trace.output_ref = self._refer(out)


def _has_tensor(v: Any) -> bool:
    if isinstance(v, torch.Tensor):
        return True
    if isinstance(v, (tuple, list)):
        return any(_has_tensor(x) for x in v)
    if isinstance(v, dict):
        return any(_has_tensor(x) for x in v.values())
    return False


def _ident(src: str) -> str:
    return re.sub(r"\W+", "_", src).strip("_") or "v"
