"""What the interpreter reports while it runs, as a class whose hooks all default to "record nothing".

`Recorder` overrides them to build a trace. Hooks that return a value (`fresh`, `read_global`,
`read_cell`, `attribute`, `item`, `shape_of`) may hand back a stand-in for it (a symbolic scalar for a
scalar read from outside the call); hooks asked for symbolic sizes (`sym_sizes`, `tensor_query`) answer
None when there are none, and the interpreter then uses the concrete value.
"""
from __future__ import annotations

import types
from typing import Any

import torch


class Observer:
    """The interpreter's hooks; the defaults observe nothing and change no value."""

    def fresh(self, obj: Any) -> Any:
        """`obj` was created by the program during the call."""
        return obj

    def read_global(self, name: str, value: Any) -> Any:
        return value

    def read_cell(self, cell: types.CellType, value: Any) -> Any:
        return value

    def attribute(self, obj: Any, attr: str, value: Any) -> Any:
        return value

    def item(self, obj: Any, key: Any, value: Any) -> Any:
        return value

    def iterated(self, value: Any) -> None:
        """`value` is being iterated over (its length becomes part of what the trace depends on)."""

    def sym_sizes(self, obj: Any) -> list[Any] | None:
        return None

    def shape_of(self, t: torch.Tensor, size: torch.Size) -> torch.Size:
        return size

    def tensor_query(self, t: torch.Tensor, name: str, args: tuple) -> Any:
        return None

    def relation(self, rel: Any, line: int) -> None:
        """A comparison or truth test over symbolic values decided control flow."""

    def loop_count(self, args: tuple, line: int) -> None:
        """`range(*args)` was called: a loop bound the trace is specialised on."""

    def write_cell(self, cell: types.CellType, name: str, detail: str, line: int) -> None:
        """The program stored into the cell `name` (`detail` describes the write)."""

    def effect(self, kind: str, target: str, detail: str, line: int) -> None:
        """A write to state outside the call: a global, a deleted cell (`kind`, `target`, `detail`)."""

    def mutation(self, obj: Any, kind: str | None, detail: str, line: int) -> None:
        """`obj` is about to be mutated (attribute, item, tensor data or metadata)."""

    def method_effect(self, obj: Any, name: str, line: int) -> None:
        """`obj.name(...)` is about to be called; the observer decides whether it mutates `obj`."""

    def graph_break(self, reason: str, line: int) -> None:
        """A point where a tracing compiler has to break the graph."""

    def op(self, fn: Any, args: tuple, kwargs: dict, result: Any, line: int) -> None:
        """A native call (tensor op or Python builtin) ran."""
