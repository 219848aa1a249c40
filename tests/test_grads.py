"""The gradient oracle: catches a compiler that perturbs gradients or whose backward crashes, and
stays silent on identity and on real torch.compile for correct programs."""
from __future__ import annotations

import functools
import textwrap

import torch
from dynfuzz.doubles import DoubleCompiler
from dynfuzz.generators.case import Case, draw_case
from dynfuzz.oracles.grads import grad_diffs, is_grad_path
from dynfuzz.oracles.snapshot import take
from dynfuzz.run.compilers import CompileSpec
from dynfuzz.run.judge import judge

GRAD_PROGRAM = """
import torch


def f(x, w):
    def heavy(a):
        return torch.sin(a) * w

    def light(a):
        return a * 2 + w.mean()
    r = torch.cond(x.mean() > 0.0625, heavy, light, (x,))
    return r * 3


def inputs(device, call=0):
    x = torch.linspace(-1.0, 1.0, 4, device=device).requires_grad_()
    w = torch.linspace(-0.5, 1.5, 4, device=device).requires_grad_()
    if call == 1:
        x = torch.linspace(0.0, 2.0, 4, device=device).requires_grad_()
    return (x, w)
"""

EAGER_REFERENCE = GRAD_PROGRAM.replace("torch.cond(x.mean() > 0.0625, heavy, light, (x,))",
                                       "heavy(x) if bool(x.mean() > 0.0625) else light(x)")


def _case() -> Case:
    return Case(source=textwrap.dedent(GRAD_PROGRAM), eager_source=EAGER_REFERENCE)


def _titles(result, oracle=None):
    return [f.title for f in result.findings if oracle is None or f.oracle == oracle]


def test_perturbed_gradients_are_a_grad_mismatch_and_nothing_else(judge_source):
    result = judge_source(GRAD_PROGRAM, compiler="perturb-grad", eager_source=EAGER_REFERENCE)
    kinds = {(f.oracle, f.kind) for f in result.findings}
    assert kinds == {("grads", "grad-mismatch")}, _titles(result)
    finding = result.findings[0]
    assert finding.call == 0 and any(".grad" in d for d in finding.details)


def test_identity_and_real_compile_keep_the_gradient_oracle_silent(judge_source):
    assert _titles(judge_source(GRAD_PROGRAM, compiler="identity", eager_source=EAGER_REFERENCE)) == []
    assert _titles(judge_source(GRAD_PROGRAM, eager_source=EAGER_REFERENCE), "grads") == []


class _BackwardCrash(DoubleCompiler):
    """Outputs whose backward raises: the compiled backward pass fails where eager's does not."""

    class _Boom(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x.clone()

        @staticmethod
        def backward(ctx, grad):
            raise RuntimeError("compiled backward exploded")

    def wrap(self, fn):
        @functools.wraps(fn)
        def run(*args):
            return self._Boom.apply(fn(*args))

        return run


def test_a_backward_that_raises_only_compiled_is_a_backward_crash():
    spec = CompileSpec(compiler="identity")
    result = judge(_case(), _BackwardCrash(spec), spec)
    crashes = [f for f in result.findings if f.oracle == "grads"]
    assert [f.kind for f in crashes] == ["backward-crash"]
    assert "only compiled" in crashes[0].message


def test_grad_diffs_see_only_gradient_paths():
    x = torch.ones(3, requires_grad=True)
    (x * 2).sum().backward()
    y = torch.ones(3, requires_grad=True)
    (y * 3).sum().backward()
    same_values_other_grad = take({"args": (x,), "out": None, "state": {}})
    other = take({"args": (y,), "out": None, "state": {}})
    assert [d[0] for d in grad_diffs(same_values_other_grad, other)] == ["args[0].grad"]
    z = torch.zeros(3, requires_grad=True)
    (z * 2).sum().backward()
    assert grad_diffs(same_values_other_grad, take({"args": (z,), "out": None, "state": {}})) == []
    assert is_grad_path("state['W'].grad") and not is_grad_path("args[0].gradient")


def test_generated_cond_programs_with_grads_agree_under_real_compile():
    spec = CompileSpec()
    from dynfuzz.run.compilers import make_compiler

    compiler = make_compiler(spec)
    checked = 0
    for seed in range(400):  # stops at the third qualifying case
        case = draw_case(seed, ("conds",))
        if "requires-grad" not in case.tags or case.intended_error or "fullgraph" in case.tags:
            continue
        result = judge(case, compiler, spec, only=("grads", "outputs"))
        assert result.findings == [], (case.source, _titles(result))
        checked += 1
        if checked == 3:
            break
    assert checked == 3
