"""Doubles for the resizes family: each reproduces one way a compiler loses track of tensor metadata.

- `lose-resize`: the call's metadata changes to tensor arguments are undone afterwards
  (the compiled code resized or restrided a copy, seed 000);
- `stale-shape`: inside the call, metadata reads return what the tensor looked like at
  entry, whatever in-place metadata ops ran since (a fake tensor used as the
  source of truth after mutation, seed 004);
- `drop-cell-data`: in-place data writes to tensors held in closure cells are undone
  (a write to a pre-existing function's cell not replayed);
- `recompile-always`: correct results, but every call counts as a new compiled frame.
"""
from __future__ import annotations

import functools

import torch

from .base import DoubleCompiler, double


def arg_tensors(value, found: list | None = None) -> list[torch.Tensor]:
    """Tensors reachable from arguments through tuples, lists and dict values, each once."""
    found = [] if found is None else found
    if isinstance(value, torch.Tensor):
        if not any(value is t for t in found):
            found.append(value)
    elif isinstance(value, (tuple, list)):
        for v in value:
            arg_tensors(v, found)
    elif isinstance(value, dict):
        for v in value.values():
            arg_tensors(v, found)
    return found


def _layout(t: torch.Tensor):
    return t.untyped_storage(), t.storage_offset(), tuple(t.shape), tuple(t.stride())


@double("lose-resize")
class LoseResize(DoubleCompiler):
    """Runs the function on stand-ins sharing each tensor argument's storage but not its metadata
    or version counter, so a resize, restride or `set_` of an argument never reaches the caller."""

    def wrap(self, fn):
        @functools.wraps(fn)
        def run(*args):
            originals = arg_tensors(args)
            proxies = [t.data for t in originals]
            result = fn(*_replace(args, originals, proxies))
            return _replace(result, proxies, originals)

        return run


def _replace(value, old: list, new: list):
    """`value` with each object of `old` swapped for its counterpart in `new` (by identity)."""
    for o, n in zip(old, new):
        if value is o:
            return n
    if isinstance(value, tuple):
        return tuple(_replace(v, old, new) for v in value)
    if isinstance(value, list):
        return [_replace(v, old, new) for v in value]
    if isinstance(value, dict):
        return {k: _replace(v, old, new) for k, v in value.items()}
    return value


_META_READS = {torch.Tensor.size, torch.Tensor.stride, torch.Tensor.dim, torch.Tensor.__len__,
               torch.Tensor.is_contiguous, torch.Tensor.shape.__get__, torch.Tensor.ndim.__get__}


class _StaleMeta(torch.Tensor):
    """A tensor whose metadata reads answer from `_entry`, the layout it had when the call began."""

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        self = args[0] if args else None
        if func in _META_READS and isinstance(self, _StaleMeta):
            shape, stride, contiguous = self.__dict__["_entry"]
            if func == torch.Tensor.size or func == torch.Tensor.shape.__get__:
                size = torch.Size(shape)
                return size if len(args) == 1 and not kwargs else size[args[1] if len(args) > 1 else kwargs["dim"]]
            if func == torch.Tensor.stride:
                return stride if len(args) == 1 and not kwargs else stride[args[1] if len(args) > 1 else kwargs["dim"]]
            if func == torch.Tensor.__len__:
                return shape[0]
            if func == torch.Tensor.is_contiguous:
                return contiguous
            return len(shape)
        with torch._C.DisableTorchFunctionSubclass():
            return func(*args, **kwargs)


@double("stale-shape")
class StaleShape(DoubleCompiler):
    """Runs the function on stand-ins whose shape/stride/dim reads stay at their entry values;
    the stand-ins' real layout and data are written back to the arguments afterwards, and
    stand-ins are swapped back for the arguments in the outputs."""

    def wrap(self, fn):
        @functools.wraps(fn)
        def run(*args):
            originals, proxies = [], []

            def proxy(v):
                if isinstance(v, torch.Tensor) and type(v) is torch.Tensor and not v.requires_grad:
                    for o, p in zip(originals, proxies):
                        if o is v:
                            return p
                    p = v.as_subclass(_StaleMeta)
                    p.__dict__["_entry"] = (tuple(v.shape), tuple(v.stride()), v.is_contiguous())
                    originals.append(v)
                    proxies.append(p)
                    return p
                return v

            result = fn(*(proxy(a) for a in args))
            with torch.no_grad(), torch._C.DisableTorchFunctionSubclass():
                for o, p in zip(originals, proxies):
                    o.set_(p.untyped_storage(), p.storage_offset(), p.size(), p.stride())
            return _swap(result, proxies, originals)

        return run


def _swap(value, proxies, originals):
    if isinstance(value, _StaleMeta):
        for o, p in zip(originals, proxies):
            if value is p:
                return o
        with torch._C.DisableTorchFunctionSubclass():
            return value.as_subclass(torch.Tensor)
    if isinstance(value, tuple):
        return tuple(_swap(v, proxies, originals) for v in value)
    if isinstance(value, list):
        return [_swap(v, proxies, originals) for v in value]
    return value


def closure_cells(fn) -> list:
    """Cells holding a tensor, in the closures of `fn` and of the program's module-level functions."""
    fns = [fn] + [v for v in fn.__globals__.values()
                  if callable(v) and getattr(getattr(v, "__code__", None), "co_filename", "") ==
                  fn.__code__.co_filename]
    found: list = []
    for f in fns:
        for cell in getattr(f, "__closure__", None) or ():
            try:
                value = cell.cell_contents
            except ValueError:
                continue
            if isinstance(value, torch.Tensor) and not any(cell is c for c in found):
                found.append(cell)
    return found


@double("drop-cell-data")
class DropCellData(DoubleCompiler):
    """Runs the call with every closure-cell tensor swapped for a clone, then puts the original
    back: in-place writes to a cell-held tensor land on a copy and are lost."""

    def wrap(self, fn):
        @functools.wraps(fn)
        def run(*args, **kwargs):
            swapped = []
            for cell in closure_cells(fn):
                original = cell.cell_contents
                cell.cell_contents = original.detach().clone()
                swapped.append((cell, original))
            try:
                result = fn(*args, **kwargs)
            finally:
                for cell, original in swapped:
                    cell.cell_contents = original
            return result

        return run

