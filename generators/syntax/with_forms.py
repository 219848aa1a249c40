"""`with` forms the rest of the family never draws, each one a context manager Dynamo models by a tracker
of its own or refuses by a graph break of its own (in a 1,000-case default-mix campaign on torch 2.13 none
of these was reached): `torch._dynamo.error_on_graph_break` around code with a graph break after it or
inside a block that allows it, `sdpa_kernel` around scaled-dot-product attention, the autograd profiler
switched off, `contextlib.closing`, a helper decorated with `torch._dynamo.config.patch`, and a leaf made
with `requires_grad=True` inside the frame under `enable_grad`.

Every form computes a tensor that the program returns, so a context Dynamo enters or leaves wrongly shows in
the outputs, or as an error eager does not raise.
"""
from __future__ import annotations

from .. import ir
from ..builder import Builder
from ..choose import choose, integer
from .common import GRAPH_BREAK, code, construct, fold, operand

EOGB = "torch._dynamo.error_on_graph_break"


@construct("with-forms")
def with_forms(draw, b: Builder) -> None:
    """One `with` form Dynamo models by a context-manager tracker of its own, or refuses by its own graph
    break."""
    kind = choose(draw, ("error-on-break-after", "error-on-break-inside", "error-on-break-nested", "sdpa",
                         "profiler", "closing", "config-decorator", "leaf-in-frame"))
    var, x, bound = operand(draw, b)
    w = b.fresh("w")
    k = integer(draw, 2, 3)
    if kind.startswith("error-on-break"):
        b.tag("graph-break-site")
        if kind == "error-on-break-after":  # the break follows a block that makes breaks errors
            code(b, f"""
                with {EOGB}(True):
                    {w} = {x} * {k}
                {GRAPH_BREAK}
                {w} = {w} + 1
                """)
        elif kind == "error-on-break-inside":  # a block that allows the break it holds
            code(b, f"""
                with {EOGB}(False):
                    {w} = {x} * {k}
                    {GRAPH_BREAK}
                    {w} = {w} + 1
                """)
        else:  # an inner block allows breaks inside an outer one that forbids them; a break after both
            code(b, f"""
                with {EOGB}(True):
                    {w} = {x} * {k}
                    with {EOGB}(False):
                        {GRAPH_BREAK}
                        {w} = {w} + 1
                {GRAPH_BREAK}
                """)
        fold(b, w, var.shape, k * bound + 1)
    elif kind == "sdpa":
        b.add_import(ir.Import("torch.nn.attention"))
        backends = choose(draw, ("torch.nn.attention.SDPBackend.MATH", "[torch.nn.attention.SDPBackend.MATH]"))
        q = b.fresh("q")
        code(b, f"""
            {q} = {x}.reshape(1, 1, -1, 1)
            with torch.nn.attention.sdpa_kernel({backends}):
                {w} = torch.nn.functional.scaled_dot_product_attention({q}, {q} * {k}, {q}).reshape({x}.shape)
            """)
        fold(b, f"{w} + {x}", var.shape, 2 * bound)
    elif kind == "profiler":
        code(b, f"""
            with torch.autograd.profiler.profile(enabled=False):
                {w} = {x} * {k}
            """)
        fold(b, w, var.shape, k * bound)
    elif kind == "closing":
        b.add_import(ir.Import("contextlib"))
        cls, obj = b.fresh("Closer"), b.fresh("closer")
        code(b, f"""
            class {cls}:
                def __init__(self):
                    self.closed = 0
                def close(self):
                    self.closed += 1
            """, module=True)
        code(b, f"""
            {obj} = {cls}()
            with contextlib.closing({obj}) as got:
                {w} = {x} * {k} + (got is {obj})
            {w} = {w} + {obj}.closed
            """)
        fold(b, w, var.shape, k * bound + 2)
    elif kind == "config-decorator":
        helper = b.fresh("syn_patched")
        code(b, f"""
            @torch._dynamo.config.patch(suppress_errors=False)
            def {helper}(t, n):
                return t * n + 1
            """, module=True)
        code(b, f"{w} = {helper}({x}, {k})")
        fold(b, w, var.shape, k * bound + 1)
    else:  # a leaf made in the frame: Dynamo breaks the graph at the factory call
        leaf = b.fresh("leaf")
        code(b, f"""
            with torch.enable_grad():
                {leaf} = torch.full({x}.shape, 0.5, requires_grad=True)
                {w} = ({leaf} * {x}).detach() * {k}
            """)
        fold(b, w, var.shape, 0.5 * k * bound)
