"""Model types shared by the harness and the oracles: observations of runs, and findings.

Oracles import only these (plus the case and trace types); they never run code.
"""
from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from typing import Any

SEVERITY = {"high": 3, "medium": 2, "low": 1, "info": 0}


@dataclass(frozen=True)
class ExcInfo:
    """A raised exception, reduced to what the exception oracle needs (picklable, no live frames)."""

    type: str
    module: str
    message: str
    causes: tuple[str, ...] = ()  # qualnames along __cause__ / __context__
    gb_type: str | None = None
    torch_frame: str | None = None  # innermost frame inside torch, "torch/_dynamo/x.py:fn"
    traceback: str = ""
    detail: str = ""  # the whole message (first 2000 characters): wrapped errors name the inner one there
    key_frame: str | None = None  # the innermost torch frame that is not a wrapper, for crash bucket keys
    # a graph break the torch under test documents (`gb0291: <gb_type>`), harness/run/graph_break_registry.py
    graph_break: str | None = None
    # the innermost torch frames outside wrappers (a crash's identity), read where the exception was live
    crash_frames: tuple[str, ...] = ()
    # raised by code outside torch (the program, or Python running it) with only torch's wrappers above it on the
    # traceback: user code failing on something the compiled frame handed it, never an internal error of torch
    outside_torch: bool = False

    @property
    def qualified(self) -> str:
        return f"{self.module}.{self.type}" if self.module and self.module != "builtins" else self.type


@dataclass
class CallRecord:
    """One call of the entry function in one mode, and the state after it."""

    index: int
    error: ExcInfo | None
    state: Any  # snapshot of {"args", "out", "state", "between"}
    before: Any = None  # snapshot of the same roots just before the call (outputs absent)
    outputs: Any = None  # live outputs, kept in-process for the gradient oracle
    args: Any = None
    between_error: ExcInfo | None = None
    seconds: float = 0.0
    frames: int = 0  # compiled frames so far, cumulative
    backward_error: ExcInfo | None = None  # from the backward pass run when outputs require grad


@dataclass
class Observation:
    """Everything seen while running a case in one mode (eager, or one compiled configuration)."""

    mode: str
    calls: list[CallRecord] = field(default_factory=list)
    setup_error: ExcInfo | None = None
    graph_breaks: int = 0
    torch_seconds: float = 0.0
    first_call_seconds: float = 0.0
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def frames(self) -> int:
        return self.calls[-1].frames if self.calls else 0


@dataclass
class Observations:
    """The inputs to every oracle: the eager run, the compiled run, and how it was compiled."""

    eager: Observation
    compiled: Observation
    backend: str = "eager"
    device: str = "cpu"
    fullgraph: bool = False
    compiler: str = "torch"
    extra: dict[str, Any] = field(default_factory=dict)


# Note [Later calls follow the first divergence]
# A call that raised in one mode only ends the comparison of the runs: from it on, the two start from different
# states (eager ran the call, its writes and its backward pass; compiled did not, or the other way round), so a
# later call's outputs, state or accumulated gradients differ because of that one call, not of a second fault.
# The exception oracle reports the call itself; the value-comparing oracles judge the calls before it.
def paired_calls(obs: Observations) -> list[tuple[CallRecord, CallRecord]]:
    """Eager's and compiled's records of each call, up to (without) the first that raised in one mode only."""
    pairs = []
    for e_call, c_call in zip(obs.eager.calls, obs.compiled.calls):
        if (e_call.error is None) != (c_call.error is None):
            break
        pairs.append((e_call, c_call))
    return pairs


@dataclass(frozen=True)
class Finding:
    """A divergence, with a stable signature for dedup and the evidence a bug report needs."""

    oracle: str
    kind: str
    message: str
    signature: str
    severity: str = "high"
    call: int | None = None
    details: tuple[str, ...] = ()
    torch_frame: str | None = None  # innermost torch frame of the error (in the signature)
    layer: str | None = None  # first layer that diverges (dynamo, aot_eager, inductor), once triangulated
    key_frame: str | None = None  # the innermost torch frame that is not a wrapper (bucket keys of crashes)
    crash_frames: tuple[str, ...] = ()  # its exception's identity frames (ExcInfo.crash_frames)
    # an exception raised outside torch: its type and the shape of its message, its identity in place of frames
    # (`AttributeError: 'tuple_iterator' object has no attribute`, oracles/exceptions.py `raised_outside`)
    raised: str | None = None

    @property
    def title(self) -> str:
        return f"[{self.oracle}/{self.kind}] {self.message}"


_NORMALISERS = [
    (re.compile(r"0x[0-9a-fA-F]+"), "0x?"),
    (re.compile(r"<dynfuzz[^>]*>"), "<program>"),
    (re.compile(r"(/[\w.\-]+)+/([\w.\-]+\.py)"), r"\2"),
    (re.compile(r"\bs\d+\b"), "s?"),
    (re.compile(r"\bu\d+\b"), "u?"),
    (re.compile(r"-?\d+(\.\d+)?(e-?\d+)?"), "N"),
    (re.compile(r"[\[(]N(, ?N)*,?[\])]"), "[shape]"),
    (re.compile(r"\s+"), " "),
]


def normalise(text: str) -> str:
    """Strip what varies between occurrences of one bug: numbers, addresses, paths, symbol ids."""
    for pattern, repl in _NORMALISERS:
        text = pattern.sub(repl, text)
    return text.strip()[:300]


def signature(oracle: str, kind: str, key: str, torch_frame: str | None = None) -> str:
    raw = "|".join((oracle, kind, normalise(key), torch_frame or ""))
    return hashlib.sha1(raw.encode()).hexdigest()[:12]


def finding(oracle: str, kind: str, message: str, key: str, *, severity: str = "high", call: int | None = None,
            details: tuple[str, ...] = (), torch_frame: str | None = None, key_frame: str | None = None,
            crash_frames: tuple[str, ...] = (), raised: str | None = None) -> Finding:
    """Build a Finding whose signature is `(oracle, kind, normalised key, innermost torch frame)`."""
    return Finding(oracle, kind, message, signature(oracle, kind, key, torch_frame), severity, call, details,
                   torch_frame, key_frame=key_frame or torch_frame, crash_frames=crash_frames, raised=raised)
