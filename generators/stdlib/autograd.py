"""Autograd and optimizers inside the compiled frame: `Tensor.backward()`, `torch.autograd.grad`, tensor
hooks, and `torch.optim` steps on module-level parameters.

Dynamo does not trace a backward call: it breaks the graph there; or, under
`torch._dynamo.config.compiled_autograd`, hands the autograd graph to compiled autograd, which traces it
again with Dynamo (hooks and all); or, under `trace_autograd_ops`, traces it into the forward graph. An
optimizer's `step()` is traced through `OptimizerVariable`, which marks its state as static inputs and
guards on it. Each construct folds the gradient or the updated parameter into a returned tensor, so a
wrong gradient, a hook run twice or not at all, or a stale optimizer state shows as a wrong value on the
first call or the re-call.
"""
from __future__ import annotations

from .. import ir
from ..builder import Builder
from ..choose import boolean, choose
from ..classes.common import emit, helper, operand, result
from ..fragments import disabled_constructs, fragment
from .common import FAMILY

# Tags a fragment adds only to some of its programs, each with its own off switch (DYNFUZZ_DISABLE_CONSTRUCTS)
COMPILED_AUTOGRAD = "compiled-autograd"
TRACE_AUTOGRAD_OPS = "trace-autograd-ops"
LR_CHANGE = "optimizer-lr-change"

# How Dynamo meets the backward: (tag, Dynamo settings). By default it breaks the graph there; compiled
# autograd traces the autograd graph with Dynamo when backward runs; `trace_autograd_ops` puts
# `backward()` and `autograd.grad` into the forward graph itself. One per program: the two together gave
# a wrong gradient that each alone does not (a 30-line program of four backward blocks, not reduced).
AUTOGRAD_MODES: tuple[tuple[str, dict[str, bool]], ...] = (
    ("", {}), (COMPILED_AUTOGRAD, {"compiled_autograd": True}), (COMPILED_AUTOGRAD, {"compiled_autograd": True}),
    (TRACE_AUTOGRAD_OPS, {"trace_autograd_ops": True}), (TRACE_AUTOGRAD_OPS, {"trace_autograd_ops": True}),
)

# (name, how the gradient of the fresh leaf `$W` is computed into `$G` ("; " between statements), a bound
# on |grad| / |operand|)
_GRAD_FORMS: tuple[tuple[str, str, float], ...] = (
    ("grad-backward", "$L = ($W * $D).sin().sum(); $L.backward(); $G = $W.grad", 1.0),
    ("grad-autograd-grad", "($G,) = torch.autograd.grad(($W * $D).tanh().sum(), [$W])", 1.0),
    ("grad-hook", "$H = $W.register_hook(lambda gr: gr * 2); ($W * $D).sum().backward(); $H.remove(); $G = $W.grad",
     2.0),
    ("grad-retain-graph", "$L = ($W * $W * $D).sum(); $L.backward(retain_graph=True); $L.backward(); $G = $W.grad",
     4.0),
    ("grad-reset", "$L = ($W * $D).sum() + ($W.detach() * $D).sum(); $L.backward(); $G = $W.grad.clone(); "
                   "$W.grad = None", 1.0),
    ("grad-create-graph", "$G = torch.autograd.grad(($W.exp() * $D).sum(), $W, create_graph=True)[0]; "
                          "$G = $G.detach()", 3.0),
    # hooks compiled autograd schedules itself: on an intermediate, after accumulation, on a graph node
    # (the intermediate's handle is not removed: that crashes Dynamo, corpus/hook_handle_remove_crash.py)
    ("grad-intermediate-hook", "$M = $W * 2; $M.register_hook(lambda gr: gr * 3); ($M * $D).sum().backward(); "
                               "$G = $W.grad", 6.0),
    ("grad-post-accumulate-hook", "$M = []; $H = $W.register_post_accumulate_grad_hook(lambda p: "
                                  "$M.append(p.grad.sum())); ($W * $D).sum().backward(); $H.remove(); "
                                  "$G = $W.grad + $M[0] / $W.numel()", 2.0),
    ("grad-retain-grad", "$M = $W * 2; $M.retain_grad(); ($M * $D).sum().backward(); $G = $W.grad + $M.grad", 3.0),
    ("grad-node-hooks", "$L = ($W * $D).sum(); $H = $L.grad_fn.register_hook(lambda gi, go: None); "
                        "$L.grad_fn.register_prehook(lambda go: (go[0] * 2,)); $L.backward(); $H.remove(); "
                        "$G = $W.grad", 2.0),
    ("grad-view-inplace", "$M = $W.clone(); $M.view(-1)[0:1].mul_(2); ($M * $D).sum().backward(); $G = $W.grad", 2.0),
)

# (name, constructor with $P the parameter); none moves an element by more than its |grad| bound per call
_OPTIMIZERS: tuple[tuple[str, str], ...] = (
    ("sgd", "torch.optim.SGD([$P], lr=0.1)"),
    ("sgd-momentum", "torch.optim.SGD([$P], lr=0.1, momentum=0.9, nesterov=True)"),
    ("adam", "torch.optim.Adam([$P], lr=0.05)"),
    ("adamw", "torch.optim.AdamW([$P], lr=0.05, weight_decay=0.1)"),
    ("rmsprop", "torch.optim.RMSprop([$P], lr=0.01)"),
    ("adagrad", "torch.optim.Adagrad([$P], lr=0.1)"),
    ("sgd-foreach", "torch.optim.SGD([$P], lr=0.1, momentum=0.5, foreach=True)"),
)


def _linspace(shape: tuple[int, ...], device: str) -> str:
    numel = 1
    for d in shape:
        numel *= d
    return f"torch.linspace(-1.0, 1.0, {numel}, device={device}).reshape({shape!r})"


@fragment(FAMILY, "autograd-backward", weight=16, nestable=False)
def autograd_backward(draw, b: Builder) -> None:
    """A gradient taken inside the frame, of a fresh leaf against a detached tensor, under `enable_grad`;
    in two cases of five with compiled autograd on, which traces that backward (and its hooks) with Dynamo,
    in two with `trace_autograd_ops`, which traces it into the forward graph. Once a program: each
    backward costs a graph break and a compile, and a second one reaches nothing the first does not."""
    if "autograd-backward" in b.tags:
        return
    text, var, bound = operand(draw, b)
    w, d, g, loss, hook, mid = (b.fresh(p) for p in ("w", "d", "g", "loss", "hk", "m"))
    _, form, factor = b.pick(draw, _GRAD_FORMS)
    body = form
    for slot, name in (("$L", loss), ("$W", w), ("$D", d), ("$G", g), ("$H", hook), ("$M", mid)):
        body = body.replace(slot, name)
    lines = [f"{w} = {_linspace(var.shape, f'{var.name}.device')}.requires_grad_()",
             f"{d} = ({text}).detach().float()", *body.split("; ")]
    emit(b, "with torch.enable_grad():\n" + "\n".join("    " + line for line in lines))
    mode = b.pick(draw, AUTOGRAD_MODES)
    chosen = any(k in b.dynamo_config for _, settings in AUTOGRAD_MODES for k in settings)  # first one wins
    if mode[0] and mode[0] not in disabled_constructs() and not chosen:
        b.dynamo_config.update(mode[1])
        b.tag(mode[0])
    result(b, f"{g}.detach() + {text}", var.shape, bound * (factor * 3 + 1), prefix="gr")


@fragment(FAMILY, "optimizer-step", weight=8, nestable=False)
def optimizer_step(draw, b: Builder) -> None:
    """A module-level parameter and optimizer; the frame sets the gradient from a visible tensor, steps
    (and at times zeroes the gradient), and returns the parameter. In three cases of four the learning rate is halved
    between calls, as a scheduler would: a step traced with stale optimizer state or a stale learning rate
    (a guard missing on either) shows as a wrong parameter on the re-call."""
    if "optimizer-step" in b.tags:  # once a program, as the backward above
        return
    text, var, bound = operand(draw, b)
    p, opt = b.fresh("P_"), b.fresh("OPT_")
    kind, make = b.pick(draw, _OPTIMIZERS)
    b.tag(f"optimizer-{kind}")
    helper(b, f"$P = torch.nn.Parameter({_linspace(var.shape, repr('cpu'))})", P=p)
    helper(b, f"$O = {make}", O=opt, P=p)
    emit(b, f"$P.grad = ({text}).detach().float().cpu()", P=p)
    emit(b, "$O.step()", O=opt)
    if boolean(draw):
        emit(b, "$O.zero_grad()", O=opt)
    if choose(draw, (True, True, True, False)) and LR_CHANGE not in disabled_constructs():
        b.between.append(ir.Code(f"{opt}.param_groups[0]['lr'] = {opt}.param_groups[0]['lr'] * 0.5"))
        b.tag(LR_CHANGE)
    result(b, f"{text} + {p}.detach().to({var.name}.device)", var.shape, 5 * bound + 2,
           prefix="pr")
