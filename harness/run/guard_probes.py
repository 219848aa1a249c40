"""Guard checks: perturb a case's call plan along the reference guards and watch the compiled cache.

From the reference trace's guards, `perturbations()` derives a few changes of
the second call's state: ones that violate a guard (a scalar's value, a
global's or a cell's contents, a tensor's dtype or requires_grad, a size moved
across a relation's boundary) and ones that violate none (new tensor values
with the same metadata, a global the trace never read). `run_perturbation()`
compiles the entry, calls it once, applies the change to the eager and the
compiled namespaces alike, calls again and records what the guard oracle needs.

Note [A perturbation that raises]
Every call of the program, eager or compiled, runs inside `_call`, which keeps what it raises as the call's
result: torch's errors are compared there, never lost. What is left to raise in `run_perturbation` is
dynfuzz's own: applying a change derived from the reference guards, rebuilding an argument, snapshotting,
diffing. So a perturbation that raises is a harness error (the guard oracle files it as `oracle-error`,
which the campaign counts under `harness_errors` `oracle`, with the traceback), never a finding and never
silently dropped: a probe that cannot run has not shown that the guards hold.

Note [Why guard checks compare against a fresh eager run]
A stale cache entry is only visible as a difference from eager on the changed
state, so both modes run the same two calls on their own namespaces; graph
breaks are covered because every resume function's recompiles are counted in
the compiler's frame count and Dynamo's guard-failure table.
"""
from __future__ import annotations

import ast
import inspect
import linecache
import re
import traceback
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import sympy
import torch
from dynfuzz.generators.case import Case
from dynfuzz.oracles.snapshot import diff, take
from dynfuzz.reference_impl import Trace
from dynfuzz.run.compilers import Compiler, TorchCompiler, compile_with_config
from dynfuzz.run.execute import exc_info, load_program, program_state

MAX_VIOLATING = 4
MAX_NEUTRAL = 2
PRIORITY = ("const-cell", "const-global", "size", "const-arg", "const-path", "dtype", "requires_grad")


@dataclass
class Perturbation:
    """A change of the second call's state; `violates` is the reference guard it breaks (None: none)."""

    name: str
    violates: str | None
    apply: Callable[[dict, Callable, tuple], tuple]
    kind: str = ""


@dataclass
class PerturbationResult:
    name: str
    violates: str | None
    kind: str
    diffs: list[str] = field(default_factory=list)
    recompiled: bool = False
    failures: list[str] = field(default_factory=list)
    would_hit: str | None = None
    compiled_error: str | None = None
    error: str = ""  # dynfuzz could not run the perturbation: the traceback (Note [A perturbation that raises])


def perturbations(trace: Trace, params: tuple[str, ...], ns: dict) -> list[Perturbation]:
    """A bounded list of perturbations derived from the first call's guards."""
    first = trace.first
    violating: list[Perturbation] = []
    neutral: list[Perturbation] = []
    relations = [g for g in first.guards if g.kind == "RELATION"]
    aliased = {g.source for g in first.guards if g.kind == "ALIAS"} | {
        g.expected for g in first.guards if g.kind == "ALIAS"}
    for g in first.guards:
        if g.kind == "CONST" and _changed(g.expected) is not None:
            setter = _setter(g.source, params)
            if setter is not None:
                new = _changed(g.expected)
                violating.append(Perturbation(f"{g.source} = {new!r}", g.text,
                                              _apply_set(setter, new), _const_kind(g.source, params)))
        elif g.kind == "TENSOR" and _arg_index(g.source, params) is not None:
            i = _arg_index(g.source, params)
            exp = g.expected
            if exp["dtype"].is_floating_point:
                other = torch.float64 if exp["dtype"] != torch.float64 else torch.float32
                violating.append(Perturbation(f"{g.source} as {other}", g.text, _apply_tensor(i, dtype=other),
                                              "dtype"))
                violating.append(Perturbation(f"{g.source} requires_grad={not exp['requires_grad']}", g.text,
                                              _apply_tensor(i, requires_grad=not exp["requires_grad"]),
                                              "requires_grad"))
            size = _size_across(relations, first.symbols, g.source, exp["shape"])
            if size is not None:
                violating.append(Perturbation(f"{g.source} resized to {size[1]}", size[0],
                                              _apply_tensor(i, shape=size[1]), "size"))
            if not aliased & {g.source}:
                neutral.append(Perturbation(f"{g.source} with new values", None, _apply_tensor(i, values=True),
                                            "values"))
    if drifts(first):
        neutral = []  # the first call changed state the second call reads: a recompile may be legitimate
    read = {g.source for g in first.guards}
    for name, value in program_state(ns).items():
        if f"G[{name!r}]" not in read and _changed(value) is not None and not callable(value):
            neutral.append(Perturbation(f"unread global {name} = {_changed(value)!r}", None,
                                        _apply_set(_global_setter(name), _changed(value)), "unread-global"))
            break
    by_kind: dict[str, Perturbation] = {}
    for p in violating:
        by_kind.setdefault(p.kind, p)
    chosen = [by_kind[k] for k in PRIORITY if k in by_kind]
    return chosen[:MAX_VIOLATING] + neutral[:MAX_NEUTRAL]


def _const_kind(source: str, params: tuple[str, ...]) -> str:
    m = re.fullmatch(r"([LG])\['(\w+)'\]", source)
    if m is None:
        return "const-cell" if source.endswith(".cell_contents") else "const-path"
    if m.group(1) == "G":
        return "const-global"
    return "const-arg" if m.group(2) in params else "const-cell"


def drifts(first: Any) -> bool:
    """Whether the first call wrote state that outlives it (a global, an outside cell or object)."""
    for e in first.effects:
        if e.target.startswith("<new"):
            continue
        if e.kind == "cell" and not e.target.startswith(("L[", "G[")):
            continue  # a cell created by this call
        if e.kind.startswith("tensor") and e.target.startswith("L["):
            continue  # inputs are rebuilt for every call
        return True
    return False


def _changed(value: Any) -> Any:
    if isinstance(value, bool):
        return not value
    if isinstance(value, int):
        return value + 1
    if isinstance(value, float):
        return value * 2 + 1
    return None


def _arg_index(source: str, params: tuple[str, ...]) -> int | None:
    m = re.fullmatch(r"L\['(\w+)'\]", source)
    return params.index(m.group(1)) if m and m.group(1) in params else None


def _global_setter(name: str) -> Callable:
    def setter(ns: dict, fn: Callable, args: tuple, value: Any) -> tuple:
        ns[name] = value
        return args

    return setter


def _setter(source: str, params: tuple[str, ...]) -> Callable | None:
    """A function that writes a value at `source` (L[...] argument or free variable, G[...] and paths)."""
    try:
        node = ast.parse(source, mode="eval").body
    except SyntaxError:
        return None
    if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and isinstance(node.slice, ast.Constant):
        root, key = node.value.id, node.slice.value
        if root == "G":
            return _global_setter(key)
        if root == "L" and key in params:
            i = params.index(key)
            return lambda ns, fn, args, v: (*args[:i], v, *args[i + 1:])

        def set_free(ns: dict, fn: Callable, args: tuple, value: Any) -> tuple:
            cell = dict(zip(fn.__code__.co_freevars, fn.__closure__ or ()))[key]
            cell.cell_contents = value
            return args

        return set_free if root == "L" else None
    if isinstance(node, (ast.Subscript, ast.Attribute)):
        prefix = ast.unparse(node.value)

        def set_path(ns: dict, fn: Callable, args: tuple, value: Any) -> tuple:
            target = eval(prefix, {"G": ns, "L": _locals(fn, args)})  # noqa: S307 - our own guard source text
            if isinstance(node, ast.Attribute):
                setattr(target, node.attr, value)
            else:
                target[eval(ast.unparse(node.slice))] = value  # noqa: S307
            return args

        return set_path
    return None


def _locals(fn: Callable, args: tuple) -> dict:
    names = list(inspect.signature(fn).parameters)
    out = dict(zip(names, args))
    for name, cell in zip(fn.__code__.co_freevars, fn.__closure__ or ()):
        try:
            out[name] = cell.cell_contents
        except ValueError:
            pass
    return out


def _apply_set(setter: Callable, value: Any) -> Callable:
    return lambda ns, fn, args: setter(ns, fn, args, value)


def _apply_tensor(i: int, dtype=None, requires_grad=None, shape=None, values=False) -> Callable:
    def apply(ns: dict, fn: Callable, args: tuple) -> tuple:
        t = args[i]
        new = t.detach()
        if shape is not None:
            new = torch.linspace(-1.0, 1.0, max(1, _prod(shape)), dtype=t.dtype).reshape(shape).to(t.device)
        if dtype is not None:
            new = new.to(dtype)
        if values:
            new = new * -0.5 + 0.25
        rg = t.requires_grad if requires_grad is None else requires_grad
        if values and t._base is not None:  # keep a view a view of a same-sized base (Dynamo guards on it)
            base = t._base.detach().clone()
            new = base.as_strided(t.size(), t.stride(), t.storage_offset())
            with torch.no_grad():
                new.mul_(-0.5).add_(0.25)
            if rg and base.is_floating_point():
                base.requires_grad_(True)
                new = base.as_strided(t.size(), t.stride(), t.storage_offset())
            return (*args[:i], new, *args[i + 1:])
        new = new.clone()
        if rg and new.is_floating_point():
            new.requires_grad_(True)
        return (*args[:i], new, *args[i + 1:])

    return apply


def _prod(shape: tuple) -> int:
    out = 1
    for s in shape:
        out *= s
    return out


def _size_across(relations: list, symbols: dict[str, str], source: str, shape: tuple) -> tuple[str, tuple] | None:
    """A new shape for the tensor at `source` that falsifies one recorded size relation."""
    for g in relations:
        rel = g.expected
        for sym in rel.free_symbols:
            where = symbols.get(str(sym), "")
            m = re.fullmatch(re.escape(source) + r"\.size\(\)\[(\d+)\]", where)
            if not m:
                continue
            d = int(m.group(1))
            others = {s: int(shape[int(re.search(r"\[(\d+)\]$", symbols[str(s)]).group(1))])
                      for s in rel.free_symbols if s != sym and symbols.get(str(s), "").startswith(source + ".")}
            if len(others) + 1 != len(rel.free_symbols):
                continue
            for cand in sorted(range(1, 2 * shape[d] + 6), key=lambda c: abs(c - shape[d])):
                if cand == shape[d]:
                    continue
                if rel.subs({**others, sym: cand}) == sympy.false:
                    return g.text, (*shape[:d], cand, *shape[d + 1:])
    return None


def run_perturbation(case: Case, compiler: Compiler, p: Perturbation, device: str = "cpu") -> PerturbationResult:
    """Two calls eagerly and compiled with `p` applied before the second; what the guard oracle needs."""
    result = PerturbationResult(p.name, p.violates, p.kind)
    compiler.reset()
    ns_e, file_e = load_program(case.eager_source or case.source, "guard-eager")
    ns_c, file_c = load_program(case.source, "guard-compiled")
    try:
        fn_e, raw_c = ns_e[case.entry], ns_c[case.entry]
        fn_c = compile_with_config(compiler, raw_c, dict(ns_c.get("COMPILE_OPTIONS", {})),
                                   dict(ns_c.get("DYNAMO_CONFIG", {})))
        states = []
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for ns, fn, raw in ((ns_e, fn_e, fn_e), (ns_c, fn_c, raw_c)):
                _call(fn, ns["inputs"](device, 0))
                if fn is fn_c:
                    frames, seen = compiler.frames(), _failure_count()
                args = p.apply(ns, raw, tuple(ns["inputs"](device, 0)))
                if fn is fn_c:
                    result.would_hit = _would_hit(raw, args)
                out, err = _call(fn, args)
                states.append((take({"args": args, "out": out, "state": program_state(ns)}), err))
        (se, ee), (sc, ec) = states
        result.compiled_error = ec.qualified if ec else None
        if (ee and ee.type) != (ec and ec.type):
            result.diffs.append(f"eager raised {ee and ee.type}, compiled raised {ec and ec.type}"
                                + (f": {ec.message}" if ec else ""))
        elif ee is None:
            result.diffs.extend(str(d) for d in diff(se, sc)[:5])
        result.recompiled = compiler.frames() > frames
        result.failures = _new_failures(seen) if isinstance(compiler, TorchCompiler) else (
            ["recompiled (the compiler reported no guard text)"] if result.recompiled else [])
    except Exception as e:  # Note [A perturbation that raises]
        result.error = f"{type(e).__name__}: {e}\n{traceback.format_exc()[-4000:]}"
    finally:
        linecache.cache.pop(file_e, None)
        linecache.cache.pop(file_c, None)
    return result


def _call(fn: Callable, args: tuple) -> tuple[Any, Any]:
    try:
        return fn(*args), None
    except Exception as e:
        return None, exc_info(e)


def _failure_count() -> int:
    """Guard failures recorded so far (0 where torch keeps no log: `note()` says so once)."""
    from dynfuzz.run.torch_compat import Unavailable, guard_failures

    try:
        return len(guard_failures())
    except Unavailable:
        return 0


def _new_failures(seen: int) -> list[str]:
    from dynfuzz.run.torch_compat import Unavailable, guard_failures

    try:
        flat = guard_failures()
    except Unavailable:
        return []
    return flat[seen:] if len(flat) > seen else []


def _would_hit(fn: Callable, args: tuple) -> str | None:
    """Offline: the compile id of a cache entry of `fn` whose guards accept the changed state, if any.

    Needs the cache-entry list and guard managers (torch 2.6+); None where unavailable, after a one-line
    note naming the torch release (run/torch_compat.py).
    """
    from dynfuzz.run.torch_compat import Unavailable, cache_entries, guard_accepts

    try:
        f_locals = _locals(fn, args)
        for entry in cache_entries(fn):
            if guard_accepts(entry, f_locals):
                return str(getattr(entry, "compile_id", "hit"))
    except Unavailable:
        return None
    except Exception:  # locals the guard tree cannot read (a guard on a dead cell): no offline answer
        return None
    return None


def guard_check(case: Case, compiler: Compiler, trace: Trace, device: str = "cpu") -> list[PerturbationResult]:
    """Every derived perturbation of `case`, run; the list goes to the guard oracle via obs.extra."""
    ns, filename = load_program(case.source, "guard-probe")
    try:
        params = tuple(inspect.signature(ns[case.entry]).parameters)
        plan = perturbations(trace, params, ns)
    finally:
        linecache.cache.pop(filename, None)
    return [run_perturbation(case, compiler, p, device) for p in plan]
