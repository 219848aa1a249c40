"""Higher-order ops other than `torch.cond` that take user functions: `torch.while_loop`, `scan`,
`associative_scan` and `map` (each body a small closure-free function), and a helper compiled once and
called twice as a `torch.compiler.nested_compile_region` (Dynamo's invoke_subgraph).

Each traces its body function into a subgraph through its own class in `variables/higher_order_ops.py`.
"""
from __future__ import annotations

from .. import ir
from ..builder import Builder
from ..choose import choose
from ..fragments import fragment
from .common import FAMILY, emit, helper, operand, result


@fragment(FAMILY, "classes", "control-hop", weight=5)
def control_hop(draw, b: Builder) -> None:
    """One of torch.while_loop (a counter and a carried tensor), scan over rows with a carry,
    associative_scan (cumulative sum along dim 0) or map over rows with an extra operand."""
    t, var, _ = operand(draw, b, vector=True)
    if not var.shape or 0 in var.shape:
        return  # an empty tensor (a zero-length view another fragment made) has no rows to loop over
    rows = f"torch.tanh({t}).reshape(-1, {var.shape[-1]})"
    shape = (var.numel // var.shape[-1], var.shape[-1])
    kind = choose(draw, ("while-loop", "scan", "associative-scan", "map"))
    body, out = b.fresh("hop_body"), b.fresh("hop")
    if kind == "while-loop":
        stop = b.fresh("hop_cond")
        helper(b, """
            def $C(i, acc):
                return i < 3
            """, C=stop)
        helper(b, """
            def $B(i, acc):
                return i + 1, torch.sin(acc) + 0.5
            """, B=body)
        emit(b, f"{out} = torch.while_loop({stop}, {body}, "
                f"(torch.zeros((), dtype=torch.int64, device={t}.device), {rows}))")
        expr = f"{out}[1] + {out}[0]"
    elif kind == "scan":
        b.add_import(ir.ImportFrom("torch._higher_order_ops.scan", ("scan",)))
        helper(b, """
            def $B(carry, row):
                nxt = carry * 0.5 + row
                return nxt, torch.tanh(nxt)
            """, B=body)
        emit(b, f"{out} = scan({body}, torch.zeros_like({rows}[0]), {rows})")
        expr = f"{out}[1] + {out}[0]"
    elif kind == "associative-scan":
        b.add_import(ir.ImportFrom("torch._higher_order_ops.associative_scan", ("associative_scan",)))
        helper(b, """
            def $B(a, c):
                return a + c
            """, B=body)
        expr = f"associative_scan({body}, {rows}, dim=0, combine_mode='generic')"
    else:
        b.add_import(ir.Code("from torch._higher_order_ops.map import map as hop_map"))
        helper(b, """
            def $B(row, k):
                return torch.sin(row) * k
            """, B=body)
        expr = f"hop_map({body}, {rows}, {choose(draw, (2.0, 0.5))})"
    result(b, expr, shape, float(2 * shape[0] + 4))


@fragment(FAMILY, "classes", "nested-compile-region", weight=5)
def nested_compile_region(draw, b: Builder) -> None:
    """A module-level helper marked `torch.compiler.nested_compile_region`, called twice on tensors of the
    same shape (one subgraph, invoked twice)."""
    fn = b.fresh("region")
    helper(b, """
        @torch.compiler.nested_compile_region
        def $F(t):
            return torch.tanh(t) * 2 + torch.sin(t)
        """, F=fn)
    t, var, _ = operand(draw, b)
    result(b, f"{fn}({t}) + {fn}(torch.tanh({t}) * 0.5)", var.shape, 6.0)
