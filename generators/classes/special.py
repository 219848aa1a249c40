"""Functions and tensors Dynamo is told to treat specially: a helper under `torch.compiler.disable`
(run eagerly between two graphs, optionally with a side effect), `torch._dynamo.allow_in_graph` on a
pure tensor helper, `torch.compiler.assume_constant_result` on a pure helper returning a constant, a
tensor subclass with a pass-through `__torch_function__`, and a pass-through `TorchFunctionMode`.

What a subclass computes is converted back to a plain tensor before it is returned, so the oracles
compare values, not subclass identity.
"""
from __future__ import annotations

from .. import ir
from ..builder import Builder
from ..choose import boolean, choose
from ..fragments import fragment
from .common import FAMILY, emit, helper, operand, place, result, where


@fragment(FAMILY, "classes", "compiler-disable", weight=5)
def compiler_disable(draw, b: Builder) -> None:
    """A helper run outside the graph: decorated with `torch.compiler.disable`, wrapped at module level
    with `torch._dynamo.disable`, or a disabled method; optionally it appends to a global list."""
    fn = b.fresh("skipped")
    log = b.fresh("SKIP_LOG_")
    record = boolean(draw)
    if record:
        b.add_global(log, ir.ListExpr(()))
    body = (f"    {log}.append(k)\n" if record else "") + "    return torch.sin(t) * k"
    style = choose(draw, ("decorator", "wrapped", "method"))
    t, var, _ = operand(draw, b)
    if style == "decorator":
        b.add_helper(ir.Code(f"@torch.compiler.disable\ndef {fn}(t, k):\n{body}"))
        call = f"{fn}({t}, 2.0)"
    elif style == "wrapped":
        b.add_helper(ir.Code(f"def {fn}_impl(t, k):\n{body}"))
        b.add_global(fn, ir.CodeExpr(f"torch._dynamo.disable({fn}_impl)"))
        call = f"{fn}({t}, 0.5)"
    else:
        cls = b.fresh("Skipper")
        method = "\n".join("    " + line for line in body.splitlines())
        b.add_helper(ir.Code(f"class {cls}:\n    @torch.compiler.disable\n    def run(self, t, k):\n{method}"))
        call = f"{cls}().run({t}, 1.5)"
    tail = f" + len({log})" if record else ""
    result(b, f"torch.cos({call}){tail} + 1", var.shape, 8.0)


@fragment(FAMILY, "classes", "opaque-helper", weight=3)
def allow_in_graph(draw, b: Builder) -> None:
    """A pure tensor helper put in the graph as one opaque call by `torch._dynamo.allow_in_graph`."""
    fn = b.fresh("opaque")
    if boolean(draw):
        helper(b, """
            @torch._dynamo.allow_in_graph
            def $F(t):
                return torch.tanh(t) * 2 + 1
            """, F=fn)
    else:
        helper(b, """
            def ${F}_impl(t):
                return torch.tanh(t) * 2 + 1
            """, F=fn)
        b.add_global(fn, ir.CodeExpr(f"torch._dynamo.allow_in_graph({fn}_impl)"))
    t, var, _ = operand(draw, b)
    result(b, f"{fn}({t}) * 0.5", var.shape, 2.0)


@fragment(FAMILY, "classes", "assume-constant", weight=5)
def assume_constant(draw, b: Builder) -> None:
    """`torch.compiler.assume_constant_result` on a pure helper returning a constant (an int computed
    from module-level data, or a float from a constant argument), as a 0-d tensor.

    A tensor result becomes a graph attribute; a Python constant would instead be stored by Dynamo in the
    module's globals under a name of its own (OutputGraph.register_attr_or_module), a global the eager run
    never has, which the effects oracle would report."""
    fn, table = b.fresh("const_of"), b.fresh("TABLE_")
    b.add_global(table, ir.CodeExpr(repr(choose(draw, ([1, 2, 3], [4], [0.5, 0.25])))))
    if boolean(draw):
        helper(b, """
            @torch.compiler.assume_constant_result
            def $F():
                return torch.tensor(sum($T) % 5)
            """, F=fn, T=table)
        call = f"{fn}()"
    else:
        helper(b, """
            @torch.compiler.assume_constant_result
            def $F(k):
                return torch.tensor(float(len($T)) * k)
            """, F=fn, T=table)
        call = f"{fn}({choose(draw, (2, 0.5))})"
    t, var, _ = operand(draw, b)
    result(b, f"torch.tanh({t}) * {call}", var.shape, 20.0)


@fragment(FAMILY, "classes", "torch-function-subclass", weight=5)
def torch_function_subclass(draw, b: Builder) -> None:
    """A `torch.Tensor` subclass with a pass-through `__torch_function__` and an extra method: made from
    a visible tensor in the frame with `as_subclass`, or passed in as an argument; the result is turned
    back into a plain tensor."""
    cls = b.fresh("Tagged")
    helper(b, """
        class $C(torch.Tensor):
            @classmethod
            def __torch_function__(cls, func, types, args=(), kwargs=None):
                if kwargs is None:
                    kwargs = {}
                return super().__torch_function__(func, types, args, kwargs)

            def double(self):
                return self * 2
        """, C=cls)
    t, var, _ = operand(draw, b)
    if b.scope is b.root and boolean(draw):
        shape = var.shape
        src_shape = ", ".join(map(str, shape)) or "1"
        n = max(var.numel, 1)
        s = place(b, "arg", f"torch.linspace(-1.0, 1.0, {n}, device=device).reshape({src_shape})"
                            f".as_subclass({cls})", "sub")
        base = f"(torch.tanh({t}) + {s})"
    else:
        s = b.fresh("sub")
        emit(b, f"{s} = torch.tanh({t}).as_subclass({cls})")
        base = s
    u = b.fresh("u")
    emit(b, f"{u} = torch.sin({base}).double() + {base}")
    result(b, f"{u}.as_subclass(torch.Tensor) + isinstance({u}, {cls})", var.shape, 8.0)


@fragment(FAMILY, "classes", "torch-function-mode", weight=5)
def torch_function_mode(draw, b: Builder) -> None:
    """A pass-through `torch.overrides.TorchFunctionMode` entered with `with` in the frame (or a global
    instance of it), around a few tensor ops."""
    cls = b.fresh("PassMode")
    helper(b, """
        class $C(torch.overrides.TorchFunctionMode):
            def __torch_function__(self, func, types, args=(), kwargs=None):
                return func(*args, **(kwargs or {}))
        """, C=cls)
    t, var, _ = operand(draw, b)
    mode = place(b, where(draw, b), f"{cls}()", "mode") if boolean(draw) else f"{cls}()"
    u = b.fresh("u")
    emit(b, f"""
        with {mode}:
            {u} = torch.sin({t}) * 2 + torch.cos({t})
        """)
    result(b, f"{u} + 1", var.shape, 4.0)
