"""`Tensor.set_` on a local, read back through another path (`set-alias`).

A tensor made in the frame is put in a list, a dict or an object attribute (and may have a view taken),
then `t.set_(src)` points it at another tensor's storage, with another shape, through its name, and the
program reads it back through the container: `.shape`, `.numel()`, its values. `set_` changes the very
object every path reaches, so a compiler that updates only the name it was called through returns the
old shape and the old values on the others (torch 2.5 did, through a list: `l[0]` kept its size). The
source is a fresh tensor or a visible one (then the two share storage, and the program reads the source
after as well).
"""
from __future__ import annotations

from .. import ir, tensor_ops
from ..builder import Builder
from ..choose import boolean, choose
from ..fragments import fragment
from .outalias import HOLDERS, _holder, _read
from .targets import fresh_expr, like

CONSTRUCT = "set-alias"
STARTS = ((3,), (2, 2), (4,))
NEW_SHAPES = ((2, 3), (5,), (3, 4), (1, 4))


@fragment("resizes", CONSTRUCT, weight=1, nestable=False)
def set_alias(draw, b: Builder) -> None:
    """`t.set_(src)` on a fresh local reachable through a list, dict or attribute; read through that path."""
    t = ir.Name(b.fresh("y"))
    b.emit(ir.Assign(t, fresh_expr(choose(draw, STARTS), like(b))))
    kind = choose(draw, HOLDERS)
    path = _holder(b, kind, t)
    if boolean(draw):  # the source is a visible tensor: both names then share its storage
        src_var = tensor_ops.pick(draw, b)
        operand, bound = tensor_ops.squash(src_var)
        src = ir.Name(b.fresh("s"))
        b.emit(ir.Assign(src, ir.method(operand, "detach")))
        shape = src_var.shape
        b.tag("set-alias-shared")
    else:
        shape = choose(draw, NEW_SHAPES)
        src = ir.Name(b.fresh("s"))
        b.emit(ir.Assign(src, fresh_expr(shape, like(b))))
        bound = 1.0
    b.emit(ir.ExprStmt(ir.method(t, "set_", src)))
    read = choose(draw, ("shape", "numel", "values", "stride"))
    _read(draw, b, read, path, shape, max(bound, 1.0))
    if read != "values" and boolean(draw):
        _read(draw, b, "values", path, shape, max(bound, 1.0))
    b.tag(f"set-alias-{kind}", f"set-alias-read-{read}")
    b.returns.append(t)
