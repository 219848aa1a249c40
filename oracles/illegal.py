"""Illegal-on-purpose programs (`case.intended_error` set): a branch mutating a cell, a list or an
operand, branches whose outputs differ in dtype or count.

The eager reference (a plain `if`) runs them happily, so parity of exceptions is the
wrong question. The compiled side must either agree with eager (same values, same
state) or refuse cleanly with the documented kind of error; an internal crash is a
`crash`, a silently different result a `miscompile`, and a clean refusal no finding.
The generic exception oracle skips these cases so nothing is reported twice.
"""
from __future__ import annotations

from .checks import diff_check
from .exceptions import documented_limit
from .grads import is_grad_path
from .model import ExcInfo, Finding, Observations, finding
from .outputs import describe, diff_key
from .policy import screen
from .registry import oracle, renders
from .sections import ROOTS, section
from .snapshot import diff

DOCUMENTED = {"UncapturedHigherOrderOpError", "Unsupported", "CondOpArgsMismatchError"}
# A TorchRuntimeError is a documented refusal only when it names the branch mismatch it refuses.
MISMATCH_WORDS = ("expected same", "Unmatched output", "torch.cond", "same dtype", "branches")


def clean_refusal(err: ExcInfo) -> bool:
    """The documented way for Dynamo to refuse an illegal higher-order-op program, or a limit torch documents
    for any program (compiled autograd takes no `create_graph=True`): an illegal program minimized down to the
    limit alone is no crash either."""
    if err.type in DOCUMENTED:
        return True
    if documented_limit(err):
        return True
    if err.type == "TorchRuntimeError":
        text = f"{err.message}\n{err.traceback}"
        return any(word in text for word in MISMATCH_WORDS) and "AssertionError" not in text
    return False


@oracle("illegal")
def illegal(case, obs: Observations, trace=None) -> list[Finding]:
    if not getattr(case, "intended_error", None) or obs.eager.setup_error or obs.compiled.setup_error:
        return []
    reference = getattr(case, "reference_note", "eager ran the program")
    for e_call, c_call in zip(obs.eager.calls, obs.compiled.calls):
        e, c, i = e_call.error, c_call.error, e_call.index
        if c is not None:
            if (e is not None and e.type == c.type) or clean_refusal(c):
                return []
            return [finding("illegal", "crash",
                            f"call {i}: illegal program ({case.intended_error} expected) crashed with {c.type}",
                            f"{c.type} {c.gb_type or c.message}", call=i, torch_frame=c.torch_frame,
                            key_frame=c.key_frame, crash_frames=c.crash_frames,
                            details=(f"compiled: {c.qualified}: {c.message}", f"reference: {reference}"))]
        if e is not None:
            return [finding("illegal", "miscompile", f"call {i}: compiled ran an illegal program the reference "
                            f"rejected with {e.type}", f"accepted {e.type}", call=i,
                            details=(f"eager: {e.type}: {e.message}", f"reference: {reference}"))]
        diffs = []
        for root in ROOTS:
            diffs += [d for d in diff(section(e_call.state, root), section(c_call.state, root), root)
                      if not is_grad_path(d[0])]
        diffs = screen(obs, diffs)  # the differences torch documents (Dynamo's static-input marker...) are none
        if diffs:
            return [finding("illegal", "miscompile",
                            f"call {i}: illegal program compiled silently with a different {diffs[0][0]}",
                            diff_key(diffs), call=i, details=(*describe(diffs), f"reference: {reference}"))]
    return []


@renders("illegal")
def render_illegal_check(f: Finding, case=None) -> list[str]:
    """Compiled may refuse the illegal program (a documented error: exit 0) or agree with the plain-`if`
    rendering eager ran; anything else is the bug."""
    words = ", ".join(repr(w) for w in MISMATCH_WORDS)
    refusal = ["refused = type(c_out).__name__ in (%s) or type(c_out) is type(out) or (" % ", ".join(
        repr(n) for n in sorted(DOCUMENTED)),
        f'    type(c_out).__name__ == "TorchRuntimeError" and any(w in str(c_out) for w in ({words}))'
        ' and "AssertionError" not in str(c_out))']
    if f.kind == "crash":
        return [*refusal, 'assert not isinstance(c_out, Exception) or refused, f"illegal program crashed the '
                'compiler instead of a documented refusal: {c_out!r}"']
    if f.details and f.details[0].startswith("eager:"):
        return ['assert isinstance(c_out, Exception), f"the plain-if program raised {out!r}; compiled accepted '
                'the illegal program and returned {c_out!r}"']
    return ["if not isinstance(c_out, Exception):  # a refusal is correct; a silent different result is not",
            *("    " + line for line in diff_check(f))]
