"""The one place dynfuzz reaches into torch's private internals.

Dynamo's introspection hooks move between releases: the cache-entry list and its guard managers, the
guard-failure log, the compile counters, the import cache of the symbolic converter. Every use goes through
a function here, so a new torch release breaks one module, not the harness. Where a release lacks a hook,
the function raises `Unavailable` (or, for pure housekeeping, does nothing) and the feature that needs it is
skipped with a one-line note naming the torch version (`note()`): never a silently empty answer. The two
speed-ups of Dynamo's logging are a switch, recorded wherever a result is:
see Note [Dynamo's logging speed-ups are a switch, and recorded].
"""
from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

_notes: set[str] = set()


class Unavailable(RuntimeError):
    """This torch release lacks an internal API a feature needs; the message names the API and the release."""


def torch_release() -> str:
    import torch

    return torch.__version__


def note(feature: str, api: str) -> str:
    """Print, once per process, that `feature` is skipped because this torch lacks `api`; return the line."""
    line = f"dynfuzz: {feature} skipped: torch {torch_release()} has no {api}"
    if line not in _notes:
        _notes.add(line)
        print(line, file=sys.stderr)
    return line


def _missing(feature: str, api: str) -> Unavailable:
    return Unavailable(note(feature, api).removeprefix("dynfuzz: "))


def cache_entries(fn: Callable) -> list[Any]:
    """Dynamo's cache entries for `fn`, most recently used first (each with `.guard_manager`, `.compile_id`)."""
    try:
        from torch._dynamo.eval_frame import _debug_get_cache_entry_list
    except ImportError:
        raise _missing("offline guard checks", "torch._dynamo.eval_frame._debug_get_cache_entry_list") from None
    return list(_debug_get_cache_entry_list(fn))


def guard_accepts(entry: Any, f_locals: dict[str, Any]) -> bool:
    """Whether a cache entry's guards accept these locals (free variables by name, with cell contents)."""
    manager = getattr(entry, "guard_manager", None)
    if manager is None or not hasattr(manager, "check"):
        raise _missing("offline guard checks", "CacheEntry.guard_manager.check (guard managers)")
    return bool(manager.check(f_locals))


def guard_failures() -> list[str]:
    """Every guard-failure message Dynamo has recorded in this process, in order."""
    try:
        from torch._dynamo.utils import guard_failures as failures
    except ImportError:
        raise _missing("guard-failure reasons", "torch._dynamo.utils.guard_failures") from None
    return [str(x) for v in failures.values() for x in v]


def compile_counter(backend: str) -> Any:
    """A backend wrapper counting frames and ops handed to `backend` (`.frame_count`, `.op_count`)."""
    try:
        from torch._dynamo.testing import CompileCounterWithBackend
    except ImportError:
        raise _missing("compile counting", "torch._dynamo.testing.CompileCounterWithBackend") from None
    return CompileCounterWithBackend(backend)


def dynamo_counters() -> Any:
    """Dynamo's global counters (`graph_break`, `frames`, `stats`, ...): a dict of Counters."""
    try:
        from torch._dynamo.utils import counters
    except ImportError:
        raise _missing("graph-break counting", "torch._dynamo.utils.counters") from None
    return counters


def reset_dynamo() -> None:
    """Forget every compiled frame, cache entry and counter (between cases)."""
    import torch._dynamo

    torch._dynamo.reset()
    try:
        dynamo_counters().clear()
    except Unavailable:
        pass


def forget_imported_module(name: str) -> None:
    """Dynamo caches modules it imported by name (`symbolic_convert._import_module`, a functools cache, and
    `__import_<name>` globals in the modules of torch.cond and the other higher-order ops): a new program
    under the same module name must not be reached through the previous one. Housekeeping only: where a
    release has neither, nothing is cached."""
    convert = sys.modules.get("torch._dynamo.symbolic_convert")
    cached = getattr(convert, "_import_module", None) if convert is not None else None
    if hasattr(cached, "cache_clear"):
        cached.cache_clear()
    # Any torch function that compiles the user's code itself leaves the alias in its own module's globals:
    # the higher-order ops' eager implementations (cond, while_loop, map, scan...), strict torch.export (its
    # traced root frame is a wrapper in torch._dynamo.functional_export, harness/run/export_runner.py), eager
    # flex_attention (around the score and mask functions), torch.func.grad (torch._functorch.apis). A
    # list of them went stale with each new construct, so every loaded torch module is cleared.
    key = f"__import_{name}"
    for module in _torch_modules():
        namespace = getattr(module, "__dict__", None)
        if isinstance(namespace, dict):  # not every sys.modules entry is a module
            namespace.pop(key, None)


_torch: tuple[int, list[Any]] = (-1, [])


def _torch_modules() -> list[Any]:
    """The loaded torch.* modules; sys.modules is scanned again only when it grew (the scan took 4 ms a
    case, the pops over the cached list a tenth of that)."""
    global _torch
    if _torch[0] != len(sys.modules):
        found = [m for n, m in list(sys.modules.items()) if n.startswith("torch.") and m is not None]
        _torch = (len(sys.modules), found)
    return _torch[1]


# Note [Dynamo's logging speed-ups are a switch, and recorded]
# Two costs of Dynamo's own logging are cut in every process that compiles (`make_compiler`), without changing
# what Dynamo compiles: the guard-latency timing after each compile and the column tables of the stack capture
# at each graph break (measured in bench/throughput.py, which also times a pristine run). They are still
# replacements of torch functions, so they are a switch: `--pristine-torch` (and the gate, always) exports
# DYNFUZZ_PRISTINE_TORCH=1 to the whole process tree and every compiler process then runs torch as shipped.
# What was in effect is recorded (`torch_patches()`: summary.json, every repro's DYNFUZZ block, the report
# header) with the active Dynamo mutants, and a speed-up whose target this release lacks is "not applicable"
# (torch 2.5.1 has neither). The originals are kept before the first replacement, so a test can compare with
# them in a process that is already patched. Observers that only count (the compile counter around the
# backend, the per-case capture of torch's log records) stay on in every mode and are recorded as such.
PRISTINE_ENV = "DYNFUZZ_PRISTINE_TORCH"
SPEEDUPS: dict[str, tuple[str, str]] = {  # name -> (module, function) it replaces
    "skip-guard-latency-profiling": ("torch._dynamo.guards", "profile_guard_manager"),
    "cache-stack-positions": ("torch._dynamo.exc", "_extract_stack_with_positions"),
}
OBSERVERS = ("compile-counter", "log-capture")
_originals: dict[str, Any] = {}


def pristine() -> bool:
    """Whether this process tree runs torch without dynfuzz's speed-ups (`--pristine-torch`, the gate)."""
    import os

    return os.environ.get(PRISTINE_ENV, "") not in ("", "0")


@contextmanager
def pristine_tree(on: bool) -> Iterator[None]:
    """Run the enclosed work, and every process it spawns, pristine (`on`) or with the speed-ups; the
    environment is put back afterwards (an in-process gate or test must not leave it set)."""
    import os

    saved = os.environ.get(PRISTINE_ENV)
    if on:
        os.environ[PRISTINE_ENV] = "1"
    else:
        os.environ.pop(PRISTINE_ENV, None)
    try:
        yield
    finally:
        if saved is None:
            os.environ.pop(PRISTINE_ENV, None)
        else:
            os.environ[PRISTINE_ENV] = saved


def original(name: str) -> Any:
    """The function torch shipped under speed-up `name`, as it was before this process first replaced it (None
    where this release lacks it)."""
    import importlib

    if name not in _originals:
        module, attr = SPEEDUPS[name]
        _originals[name] = getattr(importlib.import_module(module), attr, None)
    return _originals[name]


def set_speedups(on: bool) -> None:
    """Install the speed-ups (`on`) or put back what torch shipped; a release without a target has nothing
    to swap."""
    import importlib

    replacements = {"skip-guard-latency-profiling": _no_guard_latency, "cache-stack-positions": stack_with_positions}
    for name, (module, attr) in SPEEDUPS.items():
        shipped = original(name)
        if shipped is not None:
            setattr(importlib.import_module(module), attr, replacements[name] if on else shipped)


def apply_speedups() -> None:
    """The speed-ups as this process tree asks: on, unless `pristine()` (called wherever a compiler is made)."""
    set_speedups(not pristine())


def speedup_states() -> dict[str, str]:
    """Each speed-up's state in the compiler processes of this tree: `applied`, `off` (pristine) or
    `not applicable` (the function it replaces is absent from this torch)."""
    off = pristine()
    return {name: "not applicable" if original(name) is None else "off" if off else "applied" for name in SPEEDUPS}


def torch_patches() -> dict[str, Any]:
    """What dynfuzz changed in the torch under test: `pristine`, each speed-up's state, the count-only
    observers (on in every mode) and the Dynamo mutants in effect (`DYNFUZZ_MUTANTS`, never in a real run)."""
    import os

    mutants = sorted(n for n in os.environ.get("DYNFUZZ_MUTANTS", "").split(",") if n)
    return {"pristine": pristine(), "speedups": speedup_states(), "observers": list(OBSERVERS), "mutants": mutants}


def describe_patches(record: dict[str, Any] | None) -> str:
    """One line for a report header: `torch as shipped`, or the speed-ups applied, and any mutant."""
    if not record:
        return "torch patches not recorded"
    applied = [name for name, state in record.get("speedups", {}).items() if state == "applied"]
    text = f"speed-ups applied: {', '.join(applied)}" if applied else "torch as shipped (no speed-ups)"
    if record.get("mutants"):
        text += f"; DYNAMO MUTANTS ACTIVE: {', '.join(record['mutants'])}"
    return text


def skip_guard_latency_profiling() -> None:
    """Stop Dynamo from timing each new guard set. After building guards it flushes the CPU cache and runs
    them once (`torch._dynamo.guards.profile_guard_manager`) only to log the latency: 13% of the time of a
    default-mix case on torch 2.13. Nothing else reads the figure, so what Dynamo compiles is unchanged.
    A release without that call has nothing to skip."""
    if original("skip-guard-latency-profiling") is not None:
        import torch._dynamo.guards as guards

        guards.profile_guard_manager = _no_guard_latency


def _no_guard_latency(*args: Any, **kwargs: Any) -> float:
    return 0.0


def cache_stack_positions() -> None:
    """Make Dynamo's capture of the Python stack at each graph break (`torch._dynamo.exc.
    _extract_stack_with_positions`, for the graph-break log it always writes) reuse each code object's
    column table instead of rebuilding it for every frame: 8% of the time of a default-mix case on torch
    2.13. The stack it returns is the same, frame for frame (tested against the original). A release
    without that function has nothing to speed up."""
    if original("cache-stack-positions") is not None:
        import torch._dynamo.exc as exc

        exc._extract_stack_with_positions = stack_with_positions


_positions: dict[int, tuple[Any, list]] = {}


def stack_with_positions() -> Any:
    """The caller's stack as a StackSummary with column positions, as Dynamo builds it, with each code
    object's positions computed once (keyed by id, the code object kept alive beside them)."""
    from traceback import FrameSummary, StackSummary

    stack = StackSummary()
    frame = sys._getframe(1)
    while frame is not None:
        code = frame.f_code
        kwargs: dict[str, Any] = {}
        if sys.version_info >= (3, 11) and frame.f_lasti >= 0:
            entry = _positions.get(id(code))
            if entry is None or entry[0] is not code:
                if len(_positions) > 4096:
                    _positions.clear()
                entry = _positions[id(code)] = (code, list(code.co_positions()))
            positions, idx = entry[1], frame.f_lasti // 2
            if idx < len(positions):
                _, _, kwargs["colno"], kwargs["end_colno"] = positions[idx]
        stack.append(FrameSummary(code.co_filename, frame.f_lineno, code.co_name, lookup_line=False, **kwargs))
        frame = frame.f_back
    stack.reverse()
    return stack


def pop_function_modes(depth: int) -> int:
    """Pop torch-function modes above `depth` off the mode stack; returns how many were popped. A program's
    `with Mode():` (or a torch bug) may leave one active, and it would then intercept every later case's
    torch calls in that worker. Returns 0 (and notes it) where the release lacks the stack API."""
    import torch

    pop = getattr(torch._C, "_pop_torch_function_stack", None)
    if pop is None or not hasattr(torch._C, "_len_torch_function_stack"):
        note("restoring the torch-function mode stack between cases", "torch._C._pop_torch_function_stack")
        return 0
    popped = 0
    while function_mode_depth() > depth:
        pop()
        popped += 1
    return popped


def function_mode_depth() -> int:
    """How many torch-function modes are active (0 where the release cannot say)."""
    import torch

    length = getattr(torch._C, "_len_torch_function_stack", None)
    return length() if length is not None else 0


def functorch_depth() -> int:
    """How many torch.func transform levels (vmap, grad, jvp...) are active (0 where the release cannot say)."""
    import torch

    depth = getattr(torch._C._functorch, "get_dynamic_layer_stack_depth", None)
    return depth() if depth is not None else 0


def pop_functorch_levels(depth: int) -> int:
    """Undo torch.func transform levels above `depth`, as `torch.compile` itself does when a frame raises;
    returns how many were undone. An export that raises inside a transform can leave its level active (in
    a 1,000-case guided bench, 310 later cases of that worker failed to snapshot a `TensorWrapper`).

    Each level is undone by its transform's own decrement, the top one first. torch's
    `pop_dynamic_layer_stack_and_undo_to_depth` popped each level twice before pytorch#177585 (its decrement
    pops too): on torch 2.5 it failed functorch's internal assert `!dynamicLayerStack.empty()` out of the
    harness, and the case became a harness error. Returns 0 (and notes it) where the release lacks the API."""
    import torch

    functorch = torch._C._functorch
    leaked = functorch_depth() - depth
    if leaked <= 0:
        return 0
    peek = getattr(functorch, "peek_interpreter_stack", None)
    kinds = getattr(functorch, "TransformType", None)
    if peek is None or kinds is None:
        note("restoring the torch.func transform stack between cases", "torch._C._functorch.peek_interpreter_stack")
        return 0
    undo = {kinds.Grad: "_grad_decrement_nesting", kinds.Vmap: "_vmap_decrement_nesting",
            kinds.Jvp: "_jvp_decrement_nesting", kinds.Functionalize: "_func_decrement_nesting"}
    while functorch_depth() > depth:
        top = peek()
        name = undo.get(top.key()) if top is not None else None
        if name is None:  # a plain `Torch` layer: only pop_dynamic_layer_stack removes it
            functorch.pop_dynamic_layer_stack()
        else:
            getattr(functorch, name)()
    return leaked


def saved_tensors_hooks_state() -> str | None:
    """Why saved-tensor hooks are disabled right now (the message `disable_saved_tensors_hooks` set), None when
    they are enabled or the release cannot say."""
    import torch

    get = getattr(torch._C._autograd, "_saved_tensors_hooks_get_disabled_error_message", None)
    return get() if get is not None else None


def restore_saved_tensors_hooks_state(message: str | None) -> bool:
    """Put saved-tensor hooks back to enabled (`message` None) or disabled with `message`; True when a case had
    changed it. `torch.func.grad` disables them for its duration (its message names torch.func and saved tensor
    hooks) and re-enables them on exit: an export that raised inside the transform never exits it, and every
    later program of the worker that used `saved_tensors_hooks` then failed with that message."""
    import torch

    if saved_tensors_hooks_state() == message:
        return False
    autograd = torch._C._autograd
    if message is None:
        autograd._saved_tensors_hooks_enable()
    else:
        autograd._saved_tensors_hooks_disable(message)
    return True


def exit_forward_ad_level() -> bool:
    """Exit a forward-mode AD level a case left entered (torch offers no query: exiting level 0 when none is
    active raises, and is then a no-op); True when one was. The graph of a strictly exported
    `torch.func.jacfwd` raises between entering and exiting its level
    (corpus/export_jacfwd_run_leaks_forward_ad.py), after which every `jacfwd` of the worker failed
    with "Nested forward mode AD is not supported". The harness never runs inside a level of its own."""
    import torch

    exit_level = getattr(torch._C, "_exit_dual_level", None)
    if exit_level is None:
        return False
    try:
        exit_level(level=0)
    except RuntimeError:
        return False
    return True


def error_on_graph_break() -> bool | None:
    """Dynamo's process-wide `error_on_graph_break` setting (None where the release has none: before 2.8)."""
    import torch._dynamo.utils as utils

    get = getattr(utils, "_get_error_on_graph_break", None)
    return get() if get is not None else None


def set_error_on_graph_break(value: bool) -> None:
    """Set it back (housekeeping: a `with torch._dynamo.error_on_graph_break(...)` block that Dynamo leaves
    without restoring the setting would make every later graph break of the worker an error)."""
    import torch._dynamo.utils as utils

    setter = getattr(utils, "_set_error_on_graph_break", None)
    if setter is not None:
        setter(value)
