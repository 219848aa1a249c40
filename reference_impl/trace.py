"""What the reference tracer produces: tensor ops, guards, the side-effect log and graph-break points.

These are plain data types; oracles may import them as types.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


class ReferenceUnsupported(Exception):
    """The program uses a construct outside the reference tracer's subset; `construct` names it."""

    def __init__(self, construct: str, line: int | None = None) -> None:
        super().__init__(f"{construct}" + (f" (line {line})" if line else ""))
        self.construct = construct
        self.line = line


@dataclass(frozen=True)
class Guard:
    """A fact the trace depends on. `kind`: TYPE, TENSOR, CONST, ID, LEN, ALIAS or RELATION; `source` says where
    the value lives (`L['x']`, `G['SCALE']`, `L['k']` for a free variable, `G['h'].__closure__[0]`)."""

    kind: str
    source: str
    expected: Any
    text: str


@dataclass(frozen=True)
class Effect:
    """One write visible outside the call: kind is cell, global, list, dict, set, attr, tensor-data or
    tensor-meta; `target` is the source or a description of the object written; `detail` the operation."""

    kind: str
    target: str
    detail: str
    line: int = 0


@dataclass
class Op:
    """One tensor operation: `fn` is replayed as `fn(*args, **kwargs)` where `Ref(k, path)` stands for a
    tensor the k-th op produced and `In(path)` for a tensor inside the call's arguments."""

    name: str
    fn: Any
    args: tuple
    kwargs: dict
    line: int = 0


@dataclass(frozen=True)
class Ref:
    op: int
    path: tuple = ()


@dataclass(frozen=True)
class In:
    path: tuple


@dataclass
class CallTrace:
    """The trace of one call of the entry function."""

    ops: list[Op] = field(default_factory=list)
    guards: list[Guard] = field(default_factory=list)
    effects: list[Effect] = field(default_factory=list)
    breaks: list[str] = field(default_factory=list)
    output: Any = None
    error: BaseException | None = None
    state: Any = None  # snapshot after the call, filled in by the harness
    output_ref: Any = None
    symbols: dict[str, str] = field(default_factory=dict)  # sympy symbol name -> source it stands for

    def guard_sources(self, kind: str | None = None) -> list[str]:
        return [g.source for g in self.guards if kind is None or g.kind == kind]


@dataclass
class Trace:
    """A whole call plan traced: one CallTrace per call, plus the entry's parameter names."""

    entry: str
    params: tuple[str, ...] = ()
    calls: list[CallTrace] = field(default_factory=list)
    seconds: float = 0.0  # the whole plan: loading, interpreting, backward passes, snapshots
    interp_seconds: float = 0.0  # interpreting the entry calls only

    @property
    def first(self) -> CallTrace:
        return self.calls[0]

    @property
    def guards(self) -> list[Guard]:
        return self.calls[0].guards if self.calls else []
