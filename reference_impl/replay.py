"""Replaying a call's recorded tensor ops on fresh inputs, without the interpreter or the program.

Ops refer to tensors by `In(path)` (inside the call's arguments) or `Ref(k, path)`
(produced by the k-th op); everything else was recorded by value.
"""
from __future__ import annotations

from typing import Any

from .trace import CallTrace, In, Ref


def replay(trace: CallTrace, args: tuple) -> Any:
    """Run `trace.ops` in order on `args` and return the output rebuilt from `trace.output_ref`."""
    results: list[Any] = []

    def resolve(v: Any) -> Any:
        if isinstance(v, In):
            return _index(args, v.path)
        if isinstance(v, Ref):
            return _index(results[v.op], v.path)
        if type(v) in (tuple, list):
            return type(v)(resolve(x) for x in v)
        if type(v) is dict:
            return {k: resolve(x) for k, x in v.items()}
        return v

    for op in trace.ops:
        results.append(op.fn(*resolve(op.args), **resolve(op.kwargs)))
    return resolve(trace.output_ref)


def _index(value: Any, path: tuple) -> Any:
    for i in path:
        value = value[i]
    return value
