"""A finding's identity from what Dynamo did, not from the program's surface.

A bucket key decides what a user counts as one bug and whether a finding is known, so it must name the fault.
The program's constructs (`triage/constructs.py`) name its surface: two programs of one fault differ there,
and two faults reached through one construct share it. What Dynamo did is read instead:

- a **crash** is named by its exception type and the first `FRAMES` frames of torch, innermost first, outside
  generic wrappers (`WRAPPER_FRAMES` and `GENERIC_FRAMES`: dispatchers, fake-tensor plumbing, Dynamo's error
  wrappers), taken from the live exception, deepest `__cause__` first;
- a **silent divergence** is named by the mechanism that failed, from the observations the oracles compared:
  a missing guard (the divergence needs the change between calls) and the kind of value that changed
  (`bool`, `int`, `dict keys`, `tensor stride`...); a side effect on a kind of object (a cell, a global, an
  object's attributes or their order, a list, a set, a deque...); a wrong output (values, metadata,
  aliasing); and, for each, the Dynamo behaviour the divergence needs (`run/behaviours.py`: the side-effect
  kinds, higher-order ops and variable trackers the failing run has and a passing ablation lost).

`Mechanism.generic` is True when nothing names the fault (a wrong output value and no behaviour the
divergence needs; a crash with no frame outside the wrappers): such a key never matches a known issue.
"""
from __future__ import annotations

import re
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass
from typing import Any

from dynfuzz.run import execute
from dynfuzz.run import judge as judge_module
from dynfuzz.run.model_checks import checking
from dynfuzz.run.torch_frames import FRAMES, GENERIC_FRAMES, crash_frames, generic_frame  # noqa: F401
from dynfuzz.run.value_provenance import recording
from dynfuzz.triage.buckets import ALIAS_ASPECTS, METADATA_ASPECTS, graph_break_identity

# Trackers nearly every program builds: they name no mechanism.
COMMON_TRACKERS = frozenset({
    "BuiltinVariable", "ConstantVariable", "LazyVariableTracker", "LazyConstantVariable", "NullVariable",
    "TensorVariable", "UserFunctionVariable", "TupleVariable", "ListVariable", "TorchInGraphFunctionVariable",
    "GetAttrVariable", "SymNodeVariable", "UnknownVariable", "PythonModuleVariable", "TypingVariable",
    "GetAttrBuiltinVariable", "SetAttrBuiltinVariable", "SliceVariable", "RangeVariable", "ListIteratorVariable",
})
_CATEGORY_ORDER = ("side-effect", "hop", "tracker")
_ROOTS = frozenset({"", "args", "state", "between", "out"})


@dataclass(frozen=True)
class Observed:
    """One judge of a case with what the oracles saw: the observations, the live compiled-side exceptions and
    Dynamo's behaviours."""

    findings: list[Any]
    obs: Any
    exceptions: list[BaseException]
    behaviours: tuple[str, ...]
    provenance: Any = None  # run/value_provenance.Provenance of the compiled tracing
    violations: tuple[str, ...] = ()  # where Dynamo's model left Python's semantics (run/model_checks.py)

    def origin(self, finding: Any) -> str | None:
        """The uncommon tracker method that made the finding's diverging output (`Provenance.origin`)."""
        return self.provenance.origin(finding.details, COMMON_TRACKERS) if self.provenance is not None else None


@contextmanager
def _spying():
    """Capture the observations handed to the oracles and every exception the runs reduce to an ExcInfo."""
    seen: dict[str, Any] = {"obs": None, "exceptions": []}
    reduce, oracles = execute.exc_info, judge_module.run_oracles

    def exc_info(e):
        seen["exceptions"].append(e)
        return reduce(e)

    def run_oracles(case, obs, *args, **kwargs):
        seen["obs"] = obs
        return oracles(case, obs, *args, **kwargs)

    execute.exc_info, judge_module.run_oracles = exc_info, run_oracles
    try:
        yield seen
    finally:
        execute.exc_info, judge_module.run_oracles = reduce, oracles


def observe_case(case: Any, compiler: Any, spec: Any, provenance: bool = False, checks: bool = False) -> Observed:
    """Judge `case` once, keeping what the oracles saw (and, with `provenance`, where traced values came from; with
    `checks`, where Dynamo's model left Python's semantics: only a silent divergence needs them, and their wrappers
    deepen the stack a recursion crash's frames are read from)."""
    with _spying() as seen, (recording() if provenance else nullcontext()) as recorded, \
            (checking() if checks else nullcontext()) as checked:
        result = judge_module.judge(case, compiler, spec)
    return Observed(result.findings, seen["obs"], seen["exceptions"], tuple(result.behaviours), recorded,
                    tuple(checked.seen) if checked is not None else ())


def crash_identity(observed: Observed, error_type: str | None) -> tuple[str, ...]:
    """The frames of the compiled side's exception of type `error_type` (the last one raised)."""
    for e in reversed(observed.exceptions):
        if error_type is None or type(e).__name__ == error_type:
            frames = crash_frames(e)
            if frames:
                return frames
    return ()


def _scalar_kind(node: Any) -> str:
    from dynfuzz.oracles.snapshot import type_name

    name = type_name(node)
    return {"NoneType": "None"}.get(name, name)


def _kind_at(path: str, kinds: dict[str, str], node_kind: str) -> str:
    """The kind of object a write at `path` changed: a cell, else the innermost container or object on the
    path, else a global (a module-level name) or an argument."""
    if ".<cells>" in path:
        return "cell"
    prefixes = [p for p in kinds if path.startswith(p) and p not in _ROOTS]
    if prefixes:
        kind = kinds[max(prefixes, key=len)]
        return "object" if kind == "obj" else kind
    return "global " + node_kind if path.startswith("state[") else "argument " + node_kind


def _aspect(aspect: str) -> str:
    if aspect in METADATA_ASPECTS:
        return "metadata"
    if aspect in ALIAS_ASPECTS:
        return "aliasing"
    if aspect in ("attribute-order", "order"):
        return "order"
    return "contents"


def state_mechanism(obs: Any, call: int) -> str | None:
    """`side effect on <kind> <aspect>` from the state the effects oracle compared at `call`."""
    from dynfuzz.oracles.effects import STATE_ROOTS
    from dynfuzz.oracles.sections import section
    from dynfuzz.oracles.snapshot import Diffs, diff

    if obs is None or call >= min(len(obs.eager.calls), len(obs.compiled.calls)):
        return None
    e, c = obs.eager.calls[call], obs.compiled.calls[call]
    diffs = Diffs()
    for root in STATE_ROOTS:
        diff(section(e.state, root), section(c.state, root), root, diffs, limit=50)
    diffs[:] = [d for d in diffs if not d[0].endswith(".grad")]
    if not diffs:
        return None
    path, aspect, expected, _ = diffs[0]
    kind = _kind_at(path, diffs.kinds, _scalar_kind(expected))
    return f"side effect on {kind} {_aspect(aspect)}"


def output_mechanism(finding: Any) -> str:
    from dynfuzz.triage.buckets import aspects

    seen = aspects(finding)
    if seen & METADATA_ASPECTS:
        return "wrong output metadata"
    if seen and seen <= ALIAS_ASPECTS:
        return "wrong output aliasing"
    return "wrong output value"


def guard_mechanism(obs: Any, call: int) -> str:
    """`missing guard on <kind> <aspect>`: what changed between the first call and `call` in eager's inputs and
    state (the value a guard should have caught)."""
    from dynfuzz.oracles.sections import section
    from dynfuzz.oracles.snapshot import Diffs, diff

    if obs is not None and 0 < call < len(obs.eager.calls):
        first, later = obs.eager.calls[0].before, obs.eager.calls[call].before
        diffs = Diffs()
        for root in ("args", "state"):
            diff(section(first, root), section(later, root), root, diffs, limit=50)
        diffs[:] = [d for d in diffs if d[1] != "storage"]
        if diffs:
            path, aspect, expected, _ = diffs[0]
            if aspect in METADATA_ASPECTS:
                return f"missing guard on tensor {aspect}"
            if aspect in ("keys", "members", "length", "attribute-order"):
                return f"missing guard on {diffs.kinds.get(path, 'container')} {aspect}"
            if aspect not in ("value", "values"):
                return f"missing guard on {aspect}"  # a function swapped on a class, a type changed...
            if path.endswith(".data") or aspect == "values":
                return "missing guard on tensor values"
            return f"missing guard on {_scalar_kind(expected)}"  # whatever holds it: an argument, global, attribute
    return "missing guard"


def needed_behaviours(failing: tuple[str, ...], passing: list[tuple[str, ...]]) -> list[str]:
    """Dynamo behaviours the divergence needs: in the failing run, lost by every passing ablation (else by any
    one), most telling category first (side-effect kinds, higher-order ops, uncommon trackers)."""
    def telling(b: str) -> bool:
        category, _, name = b.partition(":")
        return category in _CATEGORY_ORDER and not (category == "tracker" and name in COMMON_TRACKERS)

    have = {b for b in failing if telling(b)}
    lost = [have - set(p) for p in passing]
    needed = set.intersection(*lost) if lost and set.intersection(*lost) else set().union(*lost) if lost else set()
    return sorted(needed, key=lambda b: (_CATEGORY_ORDER.index(b.split(":", 1)[0]), b))


GENERIC_MECHANISMS = frozenset({"", "tensor ops", "wrong output value", "wrong output", "side effect",
                                  "missing guard"})


def names_fault(key: str) -> bool:
    """Whether a key may match a known issue: an explained key (never a cheap `<oracle>/<class>: ...` one, which
    names the program's surface) that names a mechanism or a frame. A crash key must name a torch frame outside
    the generic wrappers (`generic_frame`) or a graph break's type; a miscompile key more than a wrong output
    value."""
    head, _, rest = re.sub(r" @[\w.-]+$", "", re.sub(r" near [^ ]+(?= @|$)", "", key)).partition(":")
    rest = rest.strip()
    if "/" in head or not rest:
        return False
    if head == "crash":
        if graph_break_identity(rest) is not None:  # the type Dynamo gave the graph break names the fault
            return True
        frames = re.findall(r"(torch/[\w/.]+\.py:[\w.<>]+)", rest)
        return any(not generic_frame(f) for f in frames)
    if head == "miscompile":
        return rest not in GENERIC_MECHANISMS
    return True
