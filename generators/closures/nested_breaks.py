"""Graph breaks inside nested calls, resumed where they happen (`nested_graph_breaks`), around closure effects.

With the setting (off in torch 2.13 and 2.14.1; "Resume tracing in nested frames if a nested graph break
occurs") a graph break inside a function the frame calls no longer sends the whole call back to eager: Dynamo
compiles what it traced so far, applies its side effects, and resumes every frame of the call stack. So what
the nested call did before the break (a `nonlocal` rebinding, an `append` to a captured list, a `global` write)
must be applied before the resumed frames run, once, and what they do after must see it. One
`nested-break-closures` fragment draws one such call:
- a function defined in the frame, rebinding a cell of the frame before `torch._dynamo.graph_break()` and
  reading it after (`nested-break-cell`; the cell holds a number or a tensor: `nested-break-tensor-cell`);
- optionally an `append` to a captured list (`nested-break-list`) and a `global` write (`nested-break-global`)
  before the break, a second rebinding after it (`nested-break-after`);
- the break one or two calls deep: a middle function that writes the cell too, before and after the inner call
  (`nested-break-deep`).
The frame reads the cell, the list and the global after the call. Part of the opt-in `frontier` family.
"""
from __future__ import annotations

from .. import ir
from ..builder import Builder
from ..choose import boolean, choose
from ..classes.common import emit, operand, result
from ..fragments import fragment

FAMILY = "frontier"
SETTING = {"nested_graph_breaks": True}


@fragment(FAMILY, "nested-break-closures", weight=3, nestable=False)
def nested_break_closures(draw, b: Builder) -> None:
    """A nested call with side effects on closures and a global on both sides of a graph break inside it."""
    b.dynamo_config.update(SETTING)
    t, var, bound = operand(draw, b)
    cell, inner = b.fresh("c"), b.fresh("inner")
    tensor_cell = boolean(draw)
    b.tag("nested-break-cell", *(["nested-break-tensor-cell"] if tensor_cell else []))
    emit(b, f"{cell} = {t} * 0.5" if tensor_cell else f"{cell} = {choose(draw, (1, 2))}")
    before = [f"{cell} = {cell} + {choose(draw, (1, 3))}"]
    after: list[str] = []
    reads = [cell]
    if boolean(draw):
        lst = b.fresh("seen")
        emit(b, f"{lst} = [0]")
        before.append(f"{lst}.append({choose(draw, (2, 5))})")
        reads.append(f"len({lst}) + {lst}[-1]")
        b.tag("nested-break-list")
    declare = f"nonlocal {cell}"
    if boolean(draw):
        glob = b.fresh("HITS_")
        b.add_global(glob, ir.Const(0))
        declare += f"\n    global {glob}"
        before.append(f"{glob} = {glob} + 1")
        reads.append(glob)
        b.tag("nested-break-global")
    if boolean(draw):
        after.append(f"{cell} = {cell} * 2")
        b.tag("nested-break-after")
    body = "\n    ".join([declare, *before, "torch._dynamo.graph_break()", *after, f"return u * {cell}"])
    emit(b, f"def {inner}(u):\n    {body}")
    call = inner
    if boolean(draw):
        mid = b.fresh("mid")
        emit(b, f"def {mid}(u):\n    nonlocal {cell}\n    {cell} = {cell} - 1\n    r = {inner}(u) + {cell}\n"
                f"    {cell} = {cell} + 10\n    return r")
        call = mid
        b.tag("nested-break-deep")
    out = b.fresh("r")
    emit(b, f"{out} = {call}({t})")
    result(b, f"{out} + " + " + ".join(reads), var.shape, bound * (bound + 14) + 8 * bound + 40)
