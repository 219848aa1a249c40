"""The `resizes` family: in-place resizes and tensor metadata mutation (seeds 000 and 004).

Each fragment picks a target tensor (a graph input, an intermediate, a view of
an input, an aliased argument, a module global, or a tensor held in the
closure of a pre-existing function; `targets.py`), reaches it through a
path (directly, a nested function's cell, a list, a dict, an object attribute),
mutates it (`out=` ops, metadata ops such as `t_`/`resize_`/`set_`, or data
ops; the tables of `ops.py`), then reads its metadata in Python and
feeds the numbers into later computation and the outputs.

Targets that persist across calls (globals, closure cells) only get ops whose
resulting shape does not depend on the layout they start from, so every call
of the plan sees the same shapes; a fresh input may be re-laid-out to the
post-mutation layout for a later call (the guard scenario of seed 004).
"""
from __future__ import annotations

from .. import ir
from ..builder import Builder, TensorVar
from ..choose import boolean, choose
from ..fragments import fragment
from .ops import OpResult, OpSite, data_op, meta_op, out_op, read_back
from .targets import Target, emit_through, like, make_target, state

OPS = {"out": out_op, "meta": meta_op, "data": data_op}


def has_grad(b: Builder) -> bool:
    """Whether the program has a grad leaf (then a cond result, say, may require grad untracked)."""
    return any(p.tensor is not None and p.tensor.requires_grad for p in b.params)


# ---- the fragments -------------------------------------------------------------------


def mutate(draw, b: Builder, family_op: str, want: str | None = None) -> Target:
    """Shared body: target, access path, op, shape bookkeeping, metadata reads, call plan."""
    target = make_target(draw, b, want)
    var = target.var
    in_closure = target.kind == "closure"
    input_names = () if in_closure else tuple(p.name for p in b.params if p.tensor is not None)
    st = state(b)
    noncontig = target.noncontig or var.name in st.noncontig
    dev = ir.Name("t") if in_closure else like(b)

    def make_op(path: ir.Expr, pool: list[TensorVar]) -> OpResult:
        return OPS[family_op](draw, OpSite(target, path, pool, dev, input_names, noncontig, has_grad(b)))

    shape_before = var.shape
    result = emit_through(draw, b, target, make_op)
    b.tag(f"target-{target.kind}" if target.kind != "closure" else "target-cell", *result.tags)
    for name in (var.name, *target.alias_names):
        for v in b.root.tensors:
            if v.name == name:
                v.shape, v.bound = result.shape, result.bound
        if result.noncontig is True:
            st.noncontig.add(name)
        elif result.noncontig is False:
            st.noncontig.discard(name)
        if result.shape != shape_before or result.noncontig is not None:
            st.mutated.add(name)
    if target.base is not None and family_op == "data":
        target.base.bound = max(target.base.bound, result.bound)
    read_back(draw, b, var)
    _plan(draw, b, target, result, shape_before)
    return target


def _plan(draw, b: Builder, target: Target, result: OpResult, shape_before: tuple[int, ...]) -> None:
    """Call again with a fresh original-layout input, and, where valid, with the post-mutation layout."""
    changed = result.shape != shape_before or result.noncontig is not None
    param = target.param
    if result.shape and param is not None and result.post_layout is not None and changed and not param.per_call:
        param.per_call[1] = result.post_layout
        b.calls = max(b.calls, 3)
        b.tag("plan-mutated-layout", "plan-fresh")
    elif boolean(draw):
        b.calls = max(b.calls, 3)
        b.tag("plan-fresh")


@fragment("resizes", "out-variant", weight=3, nestable=False)
def out_variant(draw, b):
    """`torch.op(..., out=t)` where `t` has the result's shape, another shape, no elements, or odd strides."""
    mutate(draw, b, "out", choose(draw, (None, None, "empty", "noncontig")))


@fragment("resizes", "metadata-op", weight=4, nestable=False)
def metadata_op(draw, b):
    """A metadata op (`t_`, `transpose_`, `squeeze_`, `resize_`, `as_strided_`, `set_`...)."""
    mutate(draw, b, "meta")


@fragment("resizes", "data-op", weight=2, nestable=False)
def data_op_fragment(draw, b):
    """An in-place data op (`add_`, `mul_`, `copy_`, `fill_`, `zero_`, indexed assignment)."""
    mutate(draw, b, "data")


# The family's other constructs register their fragments on import.
from . import layout, outalias, set_alias  # noqa: E402,F401  isort: skip
