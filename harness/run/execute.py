"""Running one program in one mode: a fresh namespace, the call plan, a snapshot after each call.

Note [Why every run gets a fresh namespace and filename]
Eager and compiled runs must start from the same state, so the program's
source is executed anew for each mode. Dynamo keys its automatic-dynamic
"frame state" by (filename, line, name), not by code object, so each exec also
gets a unique filename; otherwise a second program would start out dynamic
because of the first.
"""
from __future__ import annotations

import builtins
import itertools
import linecache
import os
import sys
import time
import traceback
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import ModuleType
from typing import Any

from dynfuzz.errors import InvalidCase, SnapshotError
from dynfuzz.oracles.model import CallRecord, ExcInfo, Observation
from dynfuzz.oracles.snapshot import take, take_tracked
from dynfuzz.run.compilers import Compiler, compile_with_config
from dynfuzz.run.torch_frames import crash_frames, key_frame, raised_outside_torch, torch_frames

PROGRAM_MODULE = "dynfuzz_program"
PLAN_NAMES = {"inputs", "between", "CALLS", "COMPILE_OPTIONS", "DYNAMO_CONFIG", "ENTRY", "DYNFUZZ"}
_serial = itertools.count()


def load_program(source: str, tag: str) -> tuple[dict[str, Any], str]:
    """Execute `source` in a fresh namespace under a unique filename registered with linecache."""
    filename = f"<dynfuzz-{os.getpid()}-{next(_serial)}-{tag}>"
    code = compile(source, filename, "exec")
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    module = ModuleType(PROGRAM_MODULE)
    # Importable by name: Dynamo imports a function's module to reach its globals (eager-mode torch.cond).
    sys.modules[PROGRAM_MODULE] = module
    _forget_program_imports()
    ns: dict[str, Any] = module.__dict__
    ns["__builtins__"] = builtins
    exec(code, ns)
    return ns, filename


def _forget_program_imports() -> None:
    """Dynamo caches imported modules by name (a functools.cache, and `__import_<name>` globals it installs
    in the traced frame's module, torch's own cond module for eager-mode torch.cond); a new program under
    the same module name must not be reached through the previous one."""
    from dynfuzz.run.torch_compat import forget_imported_module

    forget_imported_module(PROGRAM_MODULE)


def program_state(ns: dict[str, Any]) -> dict[str, Any]:
    """The program-visible globals: everything it defined except modules and the call-plan helpers."""
    return {k: v for k, v in ns.items()
            if not k.startswith("__") and k not in PLAN_NAMES and not isinstance(v, ModuleType)}


# Failed allocations seen since the last clear(), for run/isolation.py: under --worker-memory they mean the
# case hit dynfuzz's limit (a harness error), whichever mode raised them and whatever the oracles made of it.
memory_errors: list[str] = []


def exc_info(e: BaseException) -> ExcInfo:
    """Reduce a live exception to a picklable ExcInfo: type, message, cause chain, innermost torch frame."""
    from dynfuzz.run.isolation import is_memory_error

    if is_memory_error(e):
        memory_errors.append(f"{type(e).__name__}: {str(e)[:200]}")
    causes, seen, cur = [], set(), e.__cause__ or e.__context__
    while cur is not None and id(cur) not in seen:
        seen.add(id(cur))
        causes.append(type(cur).__qualname__)
        cur = cur.__cause__ or cur.__context__
    frames = torch_frames(e)
    torch_frame = frames[-1] if frames else None
    message = str(e).strip().splitlines()[0][:500] if str(e).strip() else ""
    tb = "".join(traceback.format_exception(type(e), e, e.__traceback__, limit=-8))[-4000:]
    gb_type = getattr(e, "gb_type", None)
    return ExcInfo(type(e).__qualname__, type(e).__module__, message, tuple(causes), gb_type, torch_frame, tb,
                   str(e)[:2000], key_frame(e), _graph_break(e, gb_type, str(e)), crash_frames(e),
                   raised_outside_torch(e))


def _graph_break(e: BaseException, gb_type: str | None, message: str) -> str | None:
    """The documented graph break an `Unsupported` (or a subclass) is, by torch's registry; None otherwise."""
    if not any(c.__name__ == "Unsupported" for c in type(e).__mro__):
        return None
    from dynfuzz.run.graph_break_registry import documented

    frames = torch_frames(e)
    via_unimplemented = bool(frames) and frames[-1].startswith("torch/_dynamo/exc.py:unimplemented")
    return documented(gb_type if isinstance(gb_type, str) else None, message, via_unimplemented)


def observe(source: str, entry: str, device: str, compiler: Compiler | None, mode: str,
            keep_live: bool = False) -> Observation:
    """Run the program's call plan once, eagerly (`compiler=None`) or through `compiler`."""
    obs = Observation(mode)
    try:
        ns, filename = load_program(source, mode)
    except Exception as e:
        obs.setup_error = exc_info(e)
        return obs
    try:
        with _global_torch_state_restored(obs):
            _run_plan(ns, entry, device, compiler, obs, keep_live)
    finally:
        linecache.cache.pop(filename, None)
    return obs


@contextmanager
def _global_torch_state_restored(obs: Observation) -> Iterator[None]:
    """Grad mode, the default dtype and the torch-function mode stack as they were before the run. A program
    (or a torch bug: a grad-mode object entered across a graph break,
    corpus/set_grad_enabled_object_across_graph_break_leaks.py) can leave them changed, and a worker runs
    thousands of cases: the next run, eager or compiled, must start from the same state. A mode left active
    intercepted every later case's torch calls in a one-hour soak: 40 findings that did not reproduce.
    Modes popped are counted in `obs.extra["leaked_function_modes"]`; so are torch.func transform levels left
    active, in `obs.extra["leaked_functorch_levels"]`, and a forward-AD level left entered is exited; saved-tensor
    hooks left disabled (or enabled) by the run are put back (`obs.extra["leaked_saved_tensors_hooks_state"]`),
    and so is Dynamo's `error_on_graph_break` setting (`obs.extra["leaked_error_on_graph_break"]`)."""
    import torch
    from dynfuzz.run.torch_compat import (
        error_on_graph_break,
        exit_forward_ad_level,
        function_mode_depth,
        functorch_depth,
        pop_function_modes,
        pop_functorch_levels,
        restore_saved_tensors_hooks_state,
        saved_tensors_hooks_state,
        set_error_on_graph_break,
    )

    grad, dtype, depth = torch.is_grad_enabled(), torch.get_default_dtype(), function_mode_depth()
    levels, hooks, strict = functorch_depth(), saved_tensors_hooks_state(), error_on_graph_break()
    try:
        yield
    finally:
        if error_on_graph_break() != strict:
            set_error_on_graph_break(strict)
            obs.extra["leaked_error_on_graph_break"] = True
        leaked = pop_function_modes(depth)
        if leaked:
            obs.extra["leaked_function_modes"] = leaked
        leaked = pop_functorch_levels(levels)
        if leaked:
            obs.extra["leaked_functorch_levels"] = leaked
        if exit_forward_ad_level():
            obs.extra["leaked_forward_ad_level"] = True
        if restore_saved_tensors_hooks_state(hooks):
            obs.extra["leaked_saved_tensors_hooks_state"] = True
        torch.set_grad_enabled(grad)
        torch.set_default_dtype(dtype)


def _snapshot(obs: Observation, when: str, compiled: bool, snap: Callable[..., Any], root: Any, **kw: Any) -> Any:
    """`snap(root, **kw)`; when it raises, a SnapshotError (a harness error), except on the compiled side, whose
    snapshot is taken again tolerantly (Note [An object the snapshot cannot read] in oracles/snapshot.py): the
    judge decides from eager's snapshot whether what the compiled run left there is a torch divergence."""
    try:
        return snap(root, **kw)
    except Exception as e:
        message = f"snapshot {when} raised {type(e).__name__}: {e}"
        if not compiled:
            raise SnapshotError(message) from e
        try:
            snapshot = snap(root, tolerant=True, **kw)
        except Exception:
            raise SnapshotError(message) from e
        obs.extra.setdefault("unreadable_snapshots", []).append(message[:500])
        return snapshot


def _run_plan(ns, entry, device, compiler, obs, keep_live) -> None:
    if entry not in ns or "inputs" not in ns:
        raise InvalidCase(f"the program defines no {entry if entry not in ns else 'inputs'}()")
    fn = ns[entry]
    options = dict(ns.get("COMPILE_OPTIONS", {}))
    obs.extra["compile_options"] = options
    config = dict(ns.get("DYNAMO_CONFIG", {})) if compiler else {}
    if config:
        obs.extra["dynamo_config"] = config
    target: Callable = compile_with_config(compiler, fn, options, config) if compiler else fn
    exported = compiler is not None and compiler.exports(options)
    calls = int(ns.get("CALLS", 2))
    for i in range(calls):
        between_value, between_error = None, None
        if i > 0 and "between" in ns:
            try:
                between_value = ns["between"](i)
            except Exception as e:
                between_error = exc_info(e)
        try:
            args = ns["inputs"](device, i)
        except Exception as e:  # the same in every mode: the program is unusable, not a torch divergence
            raise InvalidCase(f"inputs({device!r}, {i}) raised {type(e).__name__}: {e}") from e
        before, known = _snapshot(obs, "before the call", compiler is not None, _tracked,
                                  {"args": args, "state": program_state(ns)})
        error, out = None, None
        start = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                out = target(*args)
            except Exception as e:
                error = exc_info(e)
        backward_error = None if error else _backward(out)
        seconds = time.perf_counter() - start
        obs.torch_seconds += seconds
        if i == 0:
            obs.first_call_seconds = seconds
        # Exported, only outputs and errors are judged (Note [What an export run is judged on]); the frame's
        # globals may even hold the fake tensors export traced with (a Python side effect applied during tracing
        # and, unlike under torch.compile, never replayed with real ones)
        visible = {} if exported else program_state(ns)
        state = _snapshot(obs, "after the call", compiler is not None, take,
                          {"args": args, "out": out, "state": visible, "between": between_value}, known_tensors=known)
        obs.calls.append(CallRecord(i, error, state, before, out if keep_live else None,
                                    args if keep_live else None, between_error, seconds,
                                    compiler.frames() if compiler else 0, backward_error))
    if compiler:
        obs.graph_breaks = compiler.graph_breaks()


def _tracked(root: Any, tolerant: bool = False) -> tuple[Any, set[int]]:
    """`take_tracked`, tolerantly when asked (the ids of the tensors it reached, for the next snapshot)."""
    if not tolerant:
        return take_tracked(root)
    from dynfuzz.oracles.snapshot import TolerantSnapshotter

    walker = TolerantSnapshotter()
    return walker.take(root), walker.tensor_ids


def grad_outputs(out: Any, positions: list[int] | None = None) -> list:
    """The output tensors that carry autograd history, in a stable order.

    `positions`, when given, receives each one's index among all output tensors: a weight that does
    not change when another output gains or loses `requires_grad` (torch.cond outputs require grad
    whenever an operand does, a plain `if` only when the taken branch uses one).
    """
    import torch

    found = []
    seen = [0]

    def go(v):
        if isinstance(v, torch.Tensor):
            seen[0] += 1
            if v.requires_grad and v.is_floating_point():
                found.append(v)
                if positions is not None:
                    positions.append(seen[0])
        elif isinstance(v, (tuple, list)):
            for x in v:
                go(x)
        elif isinstance(v, dict):
            for x in v.values():
                go(x)

    go(out)
    return found


def _backward(out: Any) -> ExcInfo | None:
    """Backward from a fixed scalar function of the outputs: sum_k (k+1) * mean(out_k), k the
    position among all output tensors (those that do not require grad contribute nothing).

    Run in eager and compiled modes alike; leaf gradients land in `.grad` and so
    in the snapshot taken right after, where the gradient oracle compares them.
    """
    positions: list[int] = []
    tensors = grad_outputs(out, positions)
    if not tensors:
        return None
    try:
        loss = sum(k * t.float().mean() for k, t in zip(positions, tensors))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            loss.backward()
    except Exception as e:
        return exc_info(e)
    return None
