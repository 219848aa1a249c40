"""Gradients: after the harness's backward pass (a fixed scalar function of the outputs), the `.grad`
of every leaf reachable from the arguments, outputs and globals must match eager, with the same
tolerance rules as outputs; a backward pass that raises only compiled is a `backward-crash`. Gradients
accumulate over calls, so only calls before the first that raised in one mode only are compared (Note [Later
calls follow the first divergence] in oracles/model.py).

The outputs and effects oracles leave `.grad` paths to this one, so a gradient-only
divergence is reported once, as `grad-mismatch`.
"""
from __future__ import annotations

from .checks import diff_check
from .model import Finding, Observations, finding, paired_calls
from .outputs import describe, diff_key
from .policy import screen, tolerance_for
from .registry import oracle, renders
from .sections import section
from .snapshot import Diffs, diff

GRAD_ROOTS = ("args", "out", "state")
# What a gradient means; its version counter, storage and strides are how autograd happened to accumulate it.
GRAD_ASPECTS = {"type", "shape", "dtype", "device", "values"}


def is_grad_path(path: str) -> bool:
    """A snapshot path that names a leaf's gradient (`args[0].grad`, `state['W'].grad`)."""
    return path.endswith(".grad")


def grad_diffs(expected, actual, tolerance=None) -> list:
    """Differences between two call snapshots on gradient paths only (`tolerance`: dtype -> (rtol, atol),
    the backend's, from oracles/policy.py)."""
    found = []
    for root in GRAD_ROOTS:
        found += [d for d in diff(section(expected, root), section(actual, root), root, Diffs(tolerance), limit=400)
                  if is_grad_path(d[0]) and d[1] in GRAD_ASPECTS]
    return found


@oracle("grads")
def grads(case, obs: Observations, trace=None) -> list[Finding]:
    found: list[Finding] = []
    for e_call, c_call in paired_calls(obs):  # Note [Later calls follow the first divergence]
        if e_call.error or c_call.error:
            continue  # raised in both modes: neither ran a backward pass
        i = e_call.index
        e_bw, c_bw = e_call.backward_error, c_call.backward_error
        if (e_bw is None) != (c_bw is None):
            side, err = ("compiled", c_bw) if c_bw is not None else ("eager", e_bw)
            found.append(finding("grads", "backward-crash", f"call {i}: backward raised {err.type} only {side}",
                                 f"{side} {err.type} {err.message}", call=i,
                                 details=(f"{side} backward: {err.type}: {err.message}",),
                                 torch_frame=err.torch_frame, key_frame=err.key_frame,
                                 crash_frames=err.crash_frames))
            break
        diffs = screen(obs, grad_diffs(e_call.state, c_call.state, tolerance_for(obs)))
        if diffs:
            found.append(finding("grads", "grad-mismatch", f"call {i}: {diffs[0][0]} {diffs[0][1]} differs",
                                 diff_key(diffs), call=i, details=tuple(describe(diffs))))
            break  # gradients accumulate, so later calls repeat the same divergence
    return found


@renders("grads")
def render_grads_check(f: Finding, case=None) -> list[str]:
    """A backward pass raising on one side only, or the first `.grad` that differs (the repro's run()
    does the same backward pass as the harness, and keeps a backward error as the call's result)."""
    if f.kind == "backward-crash":
        if f.details and f.details[0].startswith("eager"):
            return ['assert isinstance(c_out, Exception), f"eager backward raised {out!r}, compiled did not"']
        return ['assert not isinstance(c_out, Exception), f"compiled backward raised {c_out!r}, eager did not"']
    return diff_check(f)
