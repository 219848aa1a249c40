"""Doubles for the `effects` family: a dropped mutation of a set argument, a cache entry reused after
a class attribute changed, and tensor hooks that are never registered.
"""
from __future__ import annotations

import functools

import torch
from dynfuzz.oracles.snapshot import diff, take

from .base import DoubleCompiler, double


@double("drop-set-arg-mutation")
class DropSetArgMutation(DoubleCompiler):
    """Restores every set argument to its contents before the call: the 'forgot to replay `s |= ...`
    (or any other in-place change) on a set argument' bug. The effects oracle reports effect-lost."""

    def wrap(self, fn):
        @functools.wraps(fn)
        def run(*args, **kwargs):
            saved = [(a, set(a)) for a in args if isinstance(a, set)]
            try:
                return fn(*args, **kwargs)
            finally:
                for live, before in saved:
                    live.clear()
                    live.update(before)

        return run


def _is_class(v) -> bool:
    return isinstance(v, type)


def _split_globals(fn) -> tuple[dict, dict]:
    """The function's program globals split into (user classes, everything else but modules)."""
    classes, rest = {}, {}
    for k, v in fn.__globals__.items():
        if k.startswith("__") or type(v).__name__ == "module":
            continue
        (classes if _is_class(v) else rest)[k] = v
    return classes, rest


@double("stale-class-attr")
class StaleClassAttr(DoubleCompiler):
    """Caches the first call's result and returns it again when the arguments and non-class globals
    look the same and only class attributes changed: a missing guard on a class attribute. The
    outputs oracle reports the stale result as a miscompile."""

    def wrap(self, fn):
        first: list = []

        @functools.wraps(fn)
        def run(*args, **kwargs):
            classes, rest = _split_globals(fn)
            state, class_state = take({"args": args, "globals": rest}), take(classes)
            if first:
                state0, class_state0, result0 = first[0]
                if not diff(state0, state) and diff(class_state0, class_state):
                    return result0
            result = fn(*args, **kwargs)
            if not first:
                first.append((state, class_state, result))
            return result

        return run


@double("drop-hooks")
class DropHooks(DoubleCompiler):
    """Turns `Tensor.register_hook` into a no-op during the call (a handle is still returned): the hook
    never fires, so the gradients it would have changed, or the values it would have recorded, differ."""

    def wrap(self, fn):
        @functools.wraps(fn)
        def run(*args, **kwargs):
            original = torch.Tensor.register_hook
            torch.Tensor.register_hook = lambda self, hook: original(self, lambda grad: None)
            try:
                return fn(*args, **kwargs)
            finally:
                torch.Tensor.register_hook = original

        return run
