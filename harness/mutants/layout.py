"""Mutants of Dynamo's tensor guards: strides left unchecked, so a re-call with the same shape but
another layout reuses code specialised for the first one.

`GuardBuilder.TENSOR_MATCH` installs one `check_tensor` per input with its sizes and strides (a None
entry is not checked). The layout construct re-calls with transposed, step-sliced, expanded and
channels_last inputs and reads `is_contiguous()` / `stride()`; a missing stride guard then shows as a
wrong number or a `.view()` that raises only in the compiled run.
"""
from __future__ import annotations

from . import mutant


def _strides_unchecked(keep) -> None:
    """Patch TENSOR_MATCH so the stride list it guards on (the 2nd `convert_to_concrete_values` call) keeps
    only the entries `keep(strides)` returns, the others None (unchecked)."""
    from torch._dynamo import guards

    original = guards.GuardBuilder.TENSOR_MATCH
    convert = guards.convert_to_concrete_values

    def TENSOR_MATCH(self, guard, value=None):  # noqa: N802 - the name Dynamo dispatches on
        calls = [0]

        def patched(size_or_stride):
            calls[0] += 1
            values = convert(size_or_stride)
            return keep(values) if calls[0] == 2 else values

        guards.convert_to_concrete_values = patched
        try:
            return original(self, guard, value)
        finally:
            guards.convert_to_concrete_values = convert

    guards.GuardBuilder.TENSOR_MATCH = TENSOR_MATCH


@mutant("layout-inner-stride-only", construct="layout")
def inner_stride_only() -> None:
    """Only the innermost stride is guarded: a transpose is still caught, a step slice or an expand
    (which change outer strides only) reuses the contiguous code."""
    _strides_unchecked(lambda strides: [None] * (len(strides) - 1) + strides[-1:])


@mutant("layout-no-stride-guard", construct="layout")
def no_stride_guard() -> None:
    """No stride is guarded at all: any re-call with the same sizes reuses the first layout's code."""
    _strides_unchecked(lambda strides: [None] * len(strides))
