"""`with` blocks: grad modes (`torch.no_grad`, `enable_grad`, `set_grad_enabled`, the `no_grad`
decorator), `contextlib.nullcontext`, a `@contextlib.contextmanager` generator, user classes with
`__enter__`/`__exit__` (one of them suppresses the exception its block raises), and graph breaks inside
a `with` block, which make Dynamo restore and re-enter the context around the break.

Grad-mode fragments compute on a leaf that requires grad, so the mode a block runs under shows in the
outputs' `requires_grad` and in the gradients.
"""
from __future__ import annotations

from .. import ir
from ..builder import Builder
from ..choose import boolean, choose, integer
from ..effects.common import grad_input
from .common import GRAPH_BREAK, code, construct, fold, operand


def _grad_leaf(draw, b: Builder) -> tuple[str, str, tuple[int, ...], float]:
    """A fresh leaf requiring grad shaped like a visible tensor, and that tensor as an operand."""
    var, x, bound = operand(draw, b)
    shape = var.shape if var.shape else (1,)
    g = grad_input(b, shape).id
    return g, x if var.shape else f"{x}.reshape(1)", shape, bound


def _return_grad(b: Builder, expr: str) -> None:
    """Return a tensor that may require grad, kept out of the pool (later in-place or `out=` ops on it would
    be illegal on a tensor that needs grad)."""
    name = b.fresh("gm")
    b.emit(ir.Assign(ir.Name(name), ir.CodeExpr(expr)))
    b.returns.append(ir.Name(name))


@construct("with-grad-mode")
def grad_mode(draw, b: Builder) -> None:
    """Work on a leaf requiring grad under a grad-mode context manager, read outside of it."""
    g, x, shape, bound = _grad_leaf(draw, b)
    w, a = b.fresh("w"), b.fresh("a")
    kind = choose(draw, ("no-grad", "nested", "set-enabled", "decorator", "is-enabled"))
    if kind == "no-grad":
        code(b, f"""
            with torch.no_grad():
                {w} = {g} * 2 + {x}
            """)
        _return_grad(b, f"{w} + {g}")
    elif kind == "nested":
        code(b, f"""
            with torch.no_grad():
                {a} = {g} * 3
                with torch.enable_grad():
                    {w} = {g} * {x}
            """)
        _return_grad(b, f"{a} + {w}")
    elif kind == "set-enabled":
        flag = choose(draw, ("False", "True", f"{x}.dim() > 1", f"{x}.numel() > 3"))
        code(b, f"""
            with torch.set_grad_enabled({flag}):
                {w} = torch.sin({g}) * {x}
            """)
        _return_grad(b, f"{w} + int({w}.requires_grad)")
    elif kind == "decorator":
        helper = b.fresh("syn_nograd")
        deco = choose(draw, ("torch.no_grad()", "torch.enable_grad()"))
        code(b, f"""
            @{deco}
            def {helper}(t, u):
                return t * u + int(torch.is_grad_enabled())
            """, module=True)
        wrap = "with torch.no_grad():" if boolean(draw) else "if True:"
        code(b, f"""
            {wrap}
                {w} = {helper}({g}, {x})
            """)
        _return_grad(b, f"{w} + {g} * int(torch.is_grad_enabled())")
    else:
        code(b, f"""
            with torch.no_grad():
                {a} = torch.is_grad_enabled()
                {w} = {g}.detach() * 2 if {a} else {g} + 1
            """)
        _return_grad(b, f"{w} * {x} + {g}")
    del bound


def _cm_class(draw, b: Builder, suppress: bool) -> str:
    """A module-level context manager class counting entries and exits on the instance."""
    cls = b.fresh("SynCtx")
    code(b, f"""
        class {cls}:
            def __init__(self, scale):
                self.scale = scale
                self.log = []
            def __enter__(self):
                self.log.append(1)
                return self
            def __exit__(self, exc_type, exc, tb):
                self.log.append(2 if exc_type is None else 3)
                return {"exc_type is not None and issubclass(exc_type, ValueError)" if suppress else "False"}
        """, module=True)
    return cls


@construct("with-context-manager")
def context_manager(draw, b: Builder) -> None:
    """`nullcontext`, a `@contextmanager` generator, a user class with `__enter__`/`__exit__`, one whose
    `__exit__` suppresses what its block raises, and two managers in one `with`."""
    var, x, bound = operand(draw, b)
    w, m = b.fresh("w"), b.fresh("cm")
    kind = choose(draw, ("nullcontext", "generator", "class", "suppress", "two"))
    if kind == "nullcontext":
        b.add_import(ir.Import("contextlib"))
        code(b, f"""
            with contextlib.nullcontext({integer(draw, 1, 3)}) as {m}:
                {w} = {x} * {m}
            """)
        fold(b, w, var.shape, 3 * bound)
    elif kind == "generator":
        b.add_import(ir.Import("contextlib"))
        gen = b.fresh("syn_scope")
        code(b, f"""
            @contextlib.contextmanager
            def {gen}(log, k):
                log.append(k)
                try:
                    yield k * 2
                finally:
                    log.append(-1)
            """, module=True)
        log = b.fresh("log")
        code(b, f"""
            {log} = []
            with {gen}({log}, {integer(draw, 1, 3)}) as {m}:
                {w} = {x} + {m} + len({log})
            """)
        fold(b, f"{w} * len({log}) + sum({log})", var.shape, 2 * (bound + 7) + 3)
    elif kind in ("class", "suppress"):
        suppress = kind == "suppress"
        cls = _cm_class(draw, b, suppress)
        raise_it = "raise ValueError(4)" if suppress else "pass"
        code(b, f"""
            {m} = {cls}({choose(draw, (2, 0.5))})
            {w} = {x}
            with {m} as c:
                {w} = {x} * c.scale
                {raise_it}
                {w} = {w} + 100
            """)
        fold(b, f"{w} + sum({m}.log)", var.shape, 2 * bound + 105)
    else:
        b.add_import(ir.Import("contextlib"))
        cls = _cm_class(draw, b, False)
        code(b, f"""
            with {cls}(1.5) as {m}, torch.no_grad(), contextlib.nullcontext():
                {w} = {x} * {m}.scale - len({m}.log)
            """)
        fold(b, f"{w} + sum({m}.log)", var.shape, 1.5 * bound + 5)


@construct("with-graph-break")
def with_graph_break(draw, b: Builder) -> None:
    """`torch._dynamo.graph_break()` inside a `with` block: a grad mode, a user class, a `@contextmanager`
    generator, or `nullcontext`; the block goes on computing after the break."""
    b.tag("graph-break-site")
    var, x, bound = operand(draw, b)
    w, m = b.fresh("w"), b.fresh("cm")
    kind = choose(draw, ("no-grad", "class", "generator", "nullcontext", "alive"))
    if kind == "no-grad":
        code(b, f"""
            with torch.no_grad():
                {w} = {x} + 1
                {GRAPH_BREAK}
                {w} = {w} * 2
            """)
        fold(b, w, var.shape, 2 * bound + 2)
        return
    if kind == "class":
        cls = _cm_class(draw, b, False)
        code(b, f"{m} = {cls}(2)")
        head = f"with {m}:"
        tail = f"sum({m}.log)"
    elif kind == "generator":
        b.add_import(ir.Import("contextlib"))
        gen = b.fresh("syn_scope")
        code(b, f"""
            @contextlib.contextmanager
            def {gen}(log):
                log.append(1)
                yield
                log.append(2)
            """, module=True)
        code(b, f"{m} = []")
        head = f"with {gen}({m}):"
        tail = f"sum({m})"
    elif kind == "nullcontext":
        b.add_import(ir.Import("contextlib"))
        code(b, f"{m} = [5]")
        head = "with contextlib.nullcontext():"
        tail = f"sum({m})"
    else:
        # The context object itself crosses the break, then is entered. `nullcontext(value)` crashes torch 2.13
        # (known: corpus/nullcontext_value_across_graph_break_crash.py), hence drawn rarely. Grad-mode objects
        # (`torch.no_grad()`, `set_grad_enabled(False)`) leave grad mode off after the compiled call
        # (corpus/set_grad_enabled_object_across_graph_break_leaks.py): that would leak into the worker's later
        # cases, so they are never drawn here.
        b.add_import(ir.Import("contextlib"))
        made = choose(draw, ("contextlib.nullcontext()", "user-class", "user-class", "contextlib.nullcontext()",
                             "user-class", "contextlib.nullcontext()", "contextlib.nullcontext(3)"))
        if made == "user-class":
            made = f"{_cm_class(draw, b, False)}(2)"
        code(b, f"""
            {m} = {made}
            {GRAPH_BREAK}
            with {m} as got:
                {w} = {x} * 2 + int(torch.is_grad_enabled()) + (got is None)
            """)
        fold(b, w, var.shape, 2 * bound + 2)
        return
    code(b, f"""
        {head}
            {w} = {x} * 2
            {GRAPH_BREAK}
            {w} = {w} - 1
        {w} = {w} + {tail}
        """)
    fold(b, w, var.shape, 2 * bound + 10)


@construct("with-torch-context")
def torch_context(draw, b: Builder) -> None:
    """Other context managers Dynamo models: autocast (on and off), inference mode, a device as default
    device, `record_function`, `warnings.catch_warnings`, and grad mode switched by a plain call."""
    var, x, bound = operand(draw, b)
    w = b.fresh("w")
    kind = choose(draw, ("autocast", "autocast-off", "inference", "device", "record", "warnings", "set-call",
                         "decorator-call", "hooks-off"))
    if kind in ("autocast", "autocast-off"):
        flat = f"{x}.reshape(-1, 1)"
        enabled = kind == "autocast"
        code(b, f"""
            with torch.autocast('cpu', dtype=torch.bfloat16, enabled={enabled}):
                {w} = ({flat} @ {flat}.t()).float().sum(0)[:{var.numel}].reshape({tuple(var.shape)!r})
            """)
        fold(b, f"torch.tanh({w}) + {x}", var.shape, bound + 1)
        return
    if kind == "inference":
        code(b, f"""
            with torch.inference_mode():
                {w} = {x} * 2
            {w} = {w}.clone() + int({w}.is_inference())
            """)
    elif kind == "device":
        code(b, f"""
            with torch.device({x}.device.type):
                {w} = {x} * 2 + torch.ones({tuple(var.shape)!r}).to({x}.device)
            """)
    elif kind == "record":
        code(b, f"""
            with torch.autograd.profiler.record_function('syntax_block'):
                {w} = {x} * 2 + 1
            """)
    elif kind == "warnings":
        b.add_import(ir.Import("warnings"))
        code(b, f"""
            with warnings.catch_warnings():
                warnings.simplefilter('ignore')
                warnings.warn('syntax fragment')
                {w} = {x} * 2 - 1
            """)
    elif kind == "decorator-call":
        inner = b.fresh("inner")
        code(b, f"""
            def {inner}(t):
                return t * 2 + int(torch.is_grad_enabled())
            """)
        code(b, f"{w} = {choose(draw, ('torch.no_grad()', 'torch.enable_grad()'))}({inner})({x})")
    elif kind == "hooks-off":
        code(b, f"""
            with torch.autograd.graph.disable_saved_tensors_hooks('syntax'):
                {w} = {x} * 2
            with torch._C.DisableTorchFunctionSubclass():
                {w} = {w} + 1
            """)
    else:
        code(b, f"""
            prev = torch.is_grad_enabled()
            torch.set_grad_enabled(False)
            {w} = {x} * 2 + int(torch.is_grad_enabled())
            torch.set_grad_enabled(prev)
            """)
    fold(b, w, var.shape, 2 * bound + 2)
