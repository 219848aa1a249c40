"""The check half of a repro: Python lines asserting one aspect of one divergence, eager vs compiled.

Each oracle renders the check for its own kind of divergence (`render_check` next to its compare
code), from the same differences it compared, so a campaign, a saved repro and a corpus entry
cannot disagree. The lines run after the repro template's two runs, which leave these names:

    out, args, ns         eager: the last call's result (an exception it raised is the result),
                          its arguments, and the program's globals
    c_out, c_args, c_ns   the same for the compiled run
    frames                compiled frames counted after each call (recompile checks only)

Snapshot paths (`out[0]`, `args[1].attr`, `state['G']['k']`, `state['g'].<cells>.n.cell_contents`,
`state['OPT'].state.<values>[0]`: a dict entry by position, where its key is an object such as a parameter)
become Python expressions over those names.
"""
from __future__ import annotations

import ast
import re

_DETAIL = re.compile(r"^(?P<path>.+?): (?P<aspect>[\w -]+): expected (?P<exp>.*), got (?P<act>.*)$", re.S)
_STEP = re.compile(r"\.<cells>\.(\w+)\.cell_contents|\.<values>\[(\d+)\]|\[[^\]]*\]|\.\w+")
ROOT_NAMES = {"out": "out", "args": "args", "state": "ns"}
TENSOR_ATTRS = {
    "shape": "{}.shape", "stride": "{}.stride()", "offset": "{}.storage_offset()", "dtype": "{}.dtype",
    "device": "{}.device.type", "requires_grad": "{}.requires_grad", "is_leaf": "{}.is_leaf",
    "contiguous": "{}.is_contiguous()", "view": "{}._is_view()", "mutated": "({}._version > 0)",
    "maxlen": "{}.maxlen", "length": "len({})", "keys": "list({})", "members": "set({})",
    "type": "type({}).__name__", "attributes": "sorted(vars({}))", "attribute-order": "list(vars({}))",
    "function": "{}.__qualname__",
    "class": "{}.__qualname__", "default_factory": "{}.default_factory",
}


class Unrenderable(ValueError):
    """A difference this module cannot express as an assert over the repro's names."""


def parse_detail(line: str) -> tuple[str, str, str, str] | None:
    """`(path, aspect, expected, actual)` from one line of a finding's details (`outputs.describe`)."""
    m = _DETAIL.match(line)
    return (m["path"], m["aspect"], m["exp"], m["act"]) if m else None


def first_diff(finding) -> tuple[str, str, str, str]:
    """The first difference the oracle recorded: the aspect the repro checks."""
    for line in finding.details:
        parsed = parse_detail(line)
        if parsed is not None and parsed[0].split("[")[0].split(".")[0] in ROOT_NAMES:
            return parsed
    raise Unrenderable(f"no renderable difference in {finding.details[:2]}")


def expression(path: str, compiled: bool) -> str:
    """The Python expression for a snapshot path, over the eager (`out`...) or compiled (`c_out`...) names."""
    m = re.match(r"(out|args|state)(.*)$", path)
    if not m:
        raise Unrenderable(f"path {path!r} has no root the repro keeps")
    expr = ("c_" if compiled else "") + ROOT_NAMES[m[1]]
    rest = m[2]
    pos = 0
    while pos < len(rest):
        step = _STEP.match(rest, pos)
        if step is None:
            raise Unrenderable(f"cannot express {path!r}")
        if step[1]:
            expr = f"{expr}.__closure__[{expr}.__code__.co_freevars.index({step[1]!r})].cell_contents"
        elif step[2]:
            expr = f"list({expr}.values())[{step[2]}]"
        else:
            expr += step[0]
        pos = step.end()
    return expr


def _is_float(text: str) -> bool:
    try:
        value = ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return False
    return isinstance(value, float)


def assert_lines(path: str, aspect: str, expected: str = "", actual: str = "") -> list[str]:
    """Lines asserting that the compiled value at `path` equals eager's in `aspect` (the repro's check)."""
    e, c = expression(path, False), expression(path, True)
    label = f"{path} {aspect}"
    if aspect == "values":
        return [f'torch.testing.assert_close({c}, {e}, equal_nan=True, '
                f'msg=lambda m: "{label} (compiled vs eager): " + m)']
    if aspect == "value" and (_is_float(expected) or _is_float(actual)):
        if 0.0 in (_safe(expected), _safe(actual)):  # the sign of a zero is the difference
            return [f'assert repr({c}) == repr({e}), f"{label}: eager {{{e}!r}}, compiled {{{c}!r}}"']
        return [f'assert abs({c} - {e}) <= 1e-5 + 1e-4 * abs({e}), f"{label}: eager {{{e}!r}}, compiled {{{c}!r}}"']
    if aspect == "value":
        return [f'assert {c} == {e}, f"{label}: eager {{{e}!r}}, compiled {{{c}!r}}"']
    if aspect in ("storage", "identity"):
        probe = "{x}.untyped_storage().data_ptr() == {a}.untyped_storage().data_ptr()" if aspect == "storage" \
            else "{x} is {a}"
        roots = [("eager", e, "args"), ("compiled", c, "c_args")]
        lines = []
        for name, x, a in roots:
            test = probe.format(x=x, a="a")
            guard = "isinstance(a, torch.Tensor) and " if aspect == "storage" else ""
            lines.append(f"{name}_shares = [i for i, a in enumerate({a}) if {guard}{test}]")
        lines.append(f'assert compiled_shares == eager_shares, f"{path} shares {aspect} with args '
                     f'{{compiled_shares}} compiled, {{eager_shares}} eager"')
        return lines
    template = TENSOR_ATTRS.get(aspect)
    if template is None:
        raise Unrenderable(f"no check for aspect {aspect!r}")
    left, right = template.format(c), template.format(e)
    return [f'assert {left} == {right}, f"{label}: eager {{{right}!r}}, compiled {{{left}!r}}"']


def _safe(text: str):
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return None


def diff_check(finding) -> list[str]:
    """The check for a finding whose details are snapshot differences (outputs, effects, grads, illegal).

    Values are compared with `torch.testing.assert_close`'s default tolerance (PyTorch's own test
    tolerance, no looser than the oracle's), so a repro never passes while the oracle sees a divergence."""
    path, aspect, exp, act = first_diff(finding)
    return assert_lines(path, aspect, exp, act)


def agreement_check() -> list[str]:
    """For a program with no recorded divergence (a seed scenario): the same error, or the same output tensors."""
    return ["if isinstance(out, Exception) or isinstance(c_out, Exception):",
            '    assert type(c_out) is type(out), f"eager: {out!r}, compiled: {c_out!r}"',
            "else:",
            "    def tensors(o):",
            "        return [t for t in torch.utils._pytree.tree_leaves(o) if isinstance(t, torch.Tensor)]",
            '    torch.testing.assert_close(tensors(c_out), tensors(out), equal_nan=True)']
