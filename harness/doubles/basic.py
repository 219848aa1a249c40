"""The foundation's doubles: identity, a perturbed output, a dropped side effect, an internal crash."""
from __future__ import annotations

import functools

import torch

from .base import EMPTY, DoubleCompiler, cell_value, double, map_first


@double("identity")
class Identity(DoubleCompiler):
    """A perfect compiler: runs the function unchanged. Any finding against it is a false alarm."""


def map_first_float(value, fn):
    """Apply `fn` to the first floating-point tensor inside a (possibly nested) output."""
    return map_first(value, lambda v: isinstance(v, torch.Tensor) and v.is_floating_point(), fn)


@double("perturb-output")
class PerturbOutput(DoubleCompiler):
    """Adds 0.125 to the first floating-point output: a plain miscompile."""

    def wrap(self, fn):
        @functools.wraps(fn)
        def run(*args, **kwargs):
            return map_first_float(fn(*args, **kwargs), lambda t: t.detach() + 0.125)

        return run


@double("drop-effect")
class DropEffect(DoubleCompiler):
    """Undoes the first write the call made to a global binding, a global container's contents,
    or a cell of the function: the 'forgot to replay a side effect' bug."""

    def wrap(self, fn):
        @functools.wraps(fn)
        def run(*args, **kwargs):
            saved = _save(fn)
            result = fn(*args, **kwargs)
            _restore_first_change(fn, saved)
            return result

        return run


def _user_globals(fn):
    g = fn.__globals__
    return {k: v for k, v in g.items() if not k.startswith("__") and not callable(v)
            and type(v).__name__ != "module"}


def _save(fn):
    bindings = dict(_user_globals(fn))
    contents = {k: _copy_contents(v) for k, v in bindings.items()}
    cells = [(c, cell_value(c)) for c in (fn.__closure__ or ())]
    return bindings, contents, cells


def _copy_contents(v):
    if isinstance(v, list):
        return list(v)
    if isinstance(v, dict):
        return dict(v)
    if isinstance(v, set):
        return set(v)
    return None




def _contents_changed(before, now) -> bool:
    if before is None:
        return False
    if isinstance(now, list):
        return len(before) != len(now) or any(a is not b for a, b in zip(before, now))
    if isinstance(now, dict):
        return list(before) != list(now) or any(before[k] is not now[k] for k in before)
    return before != now


def _restore_first_change(fn, saved) -> None:
    bindings, contents, cells = saved
    g = fn.__globals__
    for k, old in bindings.items():
        if g.get(k) is not old:
            g[k] = old
            return
        if _contents_changed(contents[k], old):
            old.clear()
            if isinstance(old, list):
                old.extend(contents[k])
            else:
                old.update(contents[k])
            return
    for cell, old in cells:
        if old is not EMPTY and cell_value(cell) is not old:
            cell.cell_contents = old
            return


@double("crash")
class Crash(DoubleCompiler):
    """Raises the error Dynamo raises on an internal bug."""

    def wrap(self, fn):
        @functools.wraps(fn)
        def run(*args, **kwargs):
            from torch._dynamo.exc import InternalTorchDynamoError

            raise InternalTorchDynamoError("AttributeError: simulated internal error in the compiler double")

        return run


@double("segfault")
class Segfault(DoubleCompiler):
    """Kills its own process with SIGSEGV: proves a campaign survives a crashing torch and keeps the case."""

    def wrap(self, fn):
        @functools.wraps(fn)
        def run(*args, **kwargs):
            import os
            import signal

            os.kill(os.getpid(), signal.SIGSEGV)

        return run


@double("hang")
class Hang(DoubleCompiler):
    """Never returns: proves the per-case timeout turns a hang into a finding."""

    def wrap(self, fn):
        @functools.wraps(fn)
        def run(*args, **kwargs):
            import time

            while True:
                time.sleep(1)

        return run


@double("recompile-always")
class RecompileAlways(DoubleCompiler):
    """A correct compiler whose cache never hits: one new frame per call (the over-guard oracles' target)."""

    def compile(self, fn, options):
        self._frames = 0

        @functools.wraps(fn)
        def compiled(*args, **kwargs):
            self._frames += 1
            return fn(*args, **kwargs)

        return compiled
