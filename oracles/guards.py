"""The guard oracle: soundness and precision of the compiled cache under perturbations of the call plan.

The harness (harness/run/guard_probes.py) runs each perturbation derived from the
reference guards and leaves the results in `obs.extra["guards"]`; this oracle
only judges them.

Soundness: after a change that violates a reference guard, the compiled result
and side effects must equal eager's; a difference where the compiled call
neither recompiled nor raised (or where an entry's guards still accept the
state) is a stale entry reused (`guard-unsound`, high). A difference after a
recompile is a miscompile of the new state, the other oracles' business.
Precision: after a change that violates none, nothing may recompile
(`over-guard`, low), reported with the guard text the compiler failed on.
"""
from __future__ import annotations

import ast
import re
from typing import Any

from .checks import Unrenderable, assert_lines
from .model import Finding, Observations, finding
from .registry import oracle, renders


@oracle("guards")
def guard_oracle(case: Any, obs: Observations, trace: Any) -> list[Finding]:
    out: list[Finding] = []
    for r in obs.extra.get("guards", ()):
        if r.error:  # dynfuzz could not run it (Note [A perturbation that raises] in harness/run/guard_probes.py)
            out.append(finding("harness", "oracle-error", f"guard perturbation {r.name} raised "
                                                          f"{r.error.splitlines()[0]}"[:300],
                               f"guards:{r.error.split(':', 1)[0]}", severity="info", details=(r.error,)))
            continue
        stale = r.would_hit or not (r.recompiled or r.compiled_error)
        if r.violates is not None and r.diffs and stale:
            lacks = (f"; Dynamo's cache entry {r.would_hit} still accepts the changed state, so it lacks the guard "
                     f"{r.violates}") if r.would_hit else ""
            out.append(finding("guards", "guard-unsound",
                               f"stale compiled code after {r.name} (violates {r.violates}): {r.diffs[0]}{lacks}",
                               f"unsound:{r.kind}", severity="high", call=1,
                               details=(f"perturbation: {r.name}", f"reference guard: {r.violates}", *r.diffs)))
        elif r.violates is None and r.recompiled and r.failures:
            out.append(finding("guards", "over-guard",
                               f"recompiled after {r.name}, which violates no reference guard; failed on: "
                               f"{r.failures[0]}",
                               f"over:{r.kind}:{_guard_line(r.failures[0])}", severity="low", call=1,
                               details=(f"perturbation: {r.name}", *r.failures[:5])))
    return out


def _guard_line(text: str) -> str:
    """The failed guard itself: first line, without Dynamo's trailing source comment."""
    return text.splitlines()[0].split("#")[0].strip() if text else ""


_PERTURBATION = re.compile(r"(?:unread global )?(?:(?P<root>[LG])\['(?P<name>\w+)'\]|(?P<bare>\w+))(?P<rest>.*)$")


def _params(case: Any) -> list[str]:
    tree = ast.parse(case.source)
    fn = next((n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == case.entry), None)
    return [a.arg for a in fn.args.args] if fn is not None else []


def render_perturbation(f: Finding, case: Any) -> list[str]:
    """The change made before the second call, as lines over the repro's `ns` (globals) and `args`."""
    name = next((d[len("perturbation: "):] for d in f.details if d.startswith("perturbation: ")), "")
    m = _PERTURBATION.match(name)
    if m is None:
        raise Unrenderable(f"perturbation {name!r}")
    var, rest = m["name"] or m["bare"], m["rest"].strip()
    if m["root"] != "L":
        if not rest.startswith("= "):
            raise Unrenderable(f"perturbation {name!r}")
        return [f"ns[{var!r}] {rest}"]
    params = _params(case)
    if var not in params:
        raise Unrenderable(f"perturbation of a free variable {name!r}")
    a = f"args[{params.index(var)}]"
    if rest.startswith("= "):
        change = rest[2:]
    elif rest.startswith("as torch."):
        change = f"{a}.to({rest[3:]})"
    elif rest.startswith("requires_grad="):
        change = f"{a}.detach().clone().requires_grad_({rest.split('=', 1)[1]})"
    elif rest.startswith("resized to "):
        shape = ast.literal_eval(rest[len("resized to "):])
        numel = 1
        for size in shape:
            numel *= size
        change = f"torch.linspace(-1.0, 1.0, {max(1, numel)}, dtype={a}.dtype).reshape({tuple(shape)!r})"
    elif rest == "with new values":
        change = f"{a}.detach() * -0.5 + 0.25"
    else:
        raise Unrenderable(f"perturbation {name!r}")
    return ["args = list(args)", f"{a} = {change}"]


def _snapshot_path(text: str) -> str:
    """`['state']['G'][0]` (a guard diff's path) as a snapshot path, `state['G'][0]`."""
    m = re.match(r"\['(\w+)'\](.*)$", text)
    if m is None:
        raise Unrenderable(f"guard diff path {text!r}")
    return m[1] + m[2]


@renders("guards")
def render_guards_check(f: Finding, case: Any = None) -> list[str]:
    """After the perturbation: compiled must agree with eager (unsound), or not recompile (over-guard)."""
    if f.kind == "over-guard":
        return ['assert frames[1] == frames[0], f"recompiled after a change no guard needs: frames {frames}"']
    for line in f.details:
        try:
            path, aspect, exp, act = ast.literal_eval(line)
        except (ValueError, SyntaxError, TypeError):
            continue
        return assert_lines(_snapshot_path(path), aspect, repr(exp), repr(act))
    raise Unrenderable("no renderable difference after the perturbation")
