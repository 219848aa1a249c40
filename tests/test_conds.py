"""The conds family (nested torch.cond, its plain-`if` eager reference, illegal programs) and the
illegal-program oracle's three verdicts: clean refusal, internal crash, silent wrong result."""
from __future__ import annotations

import ast
import functools
import os
from dataclasses import replace

import pytest
import torch
from dynfuzz.doubles import DoubleCompiler
from dynfuzz.generators import case_seed, draw_case, ir, programs
from dynfuzz.generators.builder import Builder, TensorVar
from dynfuzz.generators.conds.nested import ILLEGAL, Site, _branch_locals, plain_if
from dynfuzz.generators.fragments import DISABLE_ENV
from dynfuzz.generators.render import render, render_stmt
from dynfuzz.oracles.illegal import clean_refusal
from dynfuzz.oracles.model import ExcInfo
from dynfuzz.run.compilers import CompileSpec, make_compiler
from dynfuzz.run.execute import observe
from dynfuzz.run.judge import judge
from hypothesis import HealthCheck, find, given, settings
from hypothesis import strategies as st

# The `cond` fragments' own cases: issue 14's constructs (tests/test_constructs_layout.py) switched off, so
# the share of each feature stays what these tests were sized for.
NEW_CONSTRUCTS = "cond-closures,unbacked-config"


def _old_cond_cases(n: int) -> list:
    saved = os.environ.get(DISABLE_ENV)
    os.environ[DISABLE_ENV] = NEW_CONSTRUCTS
    try:
        return [draw_case(case_seed(11, i), ("conds",)) for i in range(n)]
    finally:
        if saved is None:
            del os.environ[DISABLE_ENV]
        else:
            os.environ[DISABLE_ENV] = saved


CASES = _old_cond_cases(150)


def test_every_cond_program_carries_a_cond_free_eager_reference():
    with_cond = [c for c in CASES if "cond" in c.tags]
    assert len(with_cond) >= 0.8 * len(CASES)  # an unbacked-sizes program may use its value outside a cond
    for case in with_cond:
        assert "torch.cond(" in case.source and case.eager_source, case.source
        assert "torch.cond(" not in case.eager_source, case.eager_source
        ast.parse(case.source)
        ast.parse(case.eager_source)


def test_plain_if_rewrites_nested_conds_inside_out():
    inner = ir.call("torch.cond", ir.Const(True), ir.Name("t"), ir.Name("e"), ir.TupleExpr((ir.Name("a"),)))
    outer = ir.Assign(ir.Name("r"), ir.call("torch.cond", ir.BinOp(ir.method(ir.Name("x"), "size", ir.Const(0)),
                                                                    ">", ir.Const(2)),
                                            ir.Lambda(("a",), inner), ir.Name("g"), ir.TupleExpr((ir.Name("x"),))))
    assert render_stmt(plain_if(outer)) == \
        "r = (lambda a: t(a) if bool(True) else e(a))(x) if bool(x.size(0) > 2) else g(x)"


def test_the_family_covers_its_feature_tags():
    seen = set().union(*(c.tags for c in CASES))
    wanted = {"cond-depth-1", "cond-depth-2", "pred-tensor", "pred-size", "pred-const", "branch-inline",
              "branch-function", "branch-lambda", "capture-tensor", "capture-size", "capture-unbacked",
              "multi-operand", "multi-output", "requires-grad", "dynamic", "size-varying-calls",
              "mark-dynamic", "mark-dynamic-late"}
    wanted |= {f"illegal-{k}" for k in ILLEGAL}
    assert wanted <= seen, wanted - seen
    for case in CASES:
        assert (case.intended_error is not None) == any(t.startswith("illegal-") for t in case.tags)


def test_eager_references_run_cleanly_and_stay_finite():
    for case in CASES[:40]:
        obs = observe(case.eager_source, case.entry, "cpu", None, "eager", keep_live=True)
        assert obs.setup_error is None and all(c.error is None for c in obs.calls), case.eager_source
        out = obs.calls[0].outputs
        for t in out if isinstance(out, tuple) else (out,):
            if isinstance(t, torch.Tensor) and t.is_floating_point():
                assert torch.isfinite(t).all(), case.eager_source


def test_illegal_programs_raise_what_they_were_built_to_raise():
    kinds: dict[str, object] = {}
    for case in CASES:
        kind = next((t for t in case.tags if t.startswith("illegal-")), None)
        if kind and kind not in kinds:
            kinds[kind] = case
    assert len(kinds) == len(ILLEGAL)
    for case in kinds.values():
        torch._dynamo.reset()
        obs = observe(case.source, case.entry, "cpu", None, "eager")  # eager torch.cond runs Dynamo
        assert [c.error.type for c in obs.calls if c.error][:1] == [case.intended_error], case.source


def test_a_nested_cond_shrinks_small(monkeypatch):
    monkeypatch.setenv(DISABLE_ENV, NEW_CONSTRUCTS)
    smallest = find(programs(("conds",)), lambda p: "cond-depth-2" in p.tags,
                    settings=settings(database=None, max_examples=400, derandomize=True,
                                      suppress_health_check=list(HealthCheck)))
    lines = [line for line in render(smallest).splitlines() if line.strip()]
    assert len(lines) <= 15, "\n".join(lines)


# ---- the illegal-program oracle ------------------------------------------------------------------

ILLEGAL_PROGRAM = """
import torch
LOG = []


def f(x):
    def log_and_sin(a):
        LOG.append(a.sum())
        return torch.sin(a)
    return torch.cond(x.mean() > -0.0625, log_and_sin, lambda a: a - 1, (x,))


def inputs(device, call=0):
    return (torch.linspace(-1.0, 1.0, 4, device=device),)
"""
ILLEGAL_REFERENCE = ILLEGAL_PROGRAM.replace("torch.cond(x.mean() > -0.0625, log_and_sin, lambda a: a - 1, (x,))",
                                            "log_and_sin(x) if bool(x.mean() > -0.0625) else (lambda a: a - 1)(x)")
CASE_KW = {"eager_source": ILLEGAL_REFERENCE, "intended_error": "UncapturedHigherOrderOpError"}


class _InternalCrash(DoubleCompiler):
    def wrap(self, fn):
        @functools.wraps(fn)
        def run(*args):
            raise torch._dynamo.exc.InternalTorchDynamoError("KeyError: 'proxy'")

        return run


def _kinds(result):
    return sorted((f.oracle, f.kind) for f in result.findings)


def test_a_clean_refusal_of_an_illegal_program_is_not_a_finding(judge_source):
    result = judge_source(ILLEGAL_PROGRAM, **CASE_KW)
    assert _kinds(result) == []
    assert "exceptions" not in {f.oracle for f in result.findings}


def test_an_internal_crash_on_an_illegal_program_is_a_crash():
    from dynfuzz.generators.case import Case

    spec = CompileSpec(compiler="identity")
    result = judge(Case(ILLEGAL_PROGRAM, **CASE_KW), _InternalCrash(spec), spec)
    assert _kinds(result) == [("illegal", "crash")]
    assert "InternalTorchDynamoError" in result.findings[0].message


def _plain_cond(pred, true_fn, false_fn, operands):
    return true_fn(*operands) if bool(pred) else false_fn(*operands)


class _AcceptsIllegal(DoubleCompiler):
    """Runs the program with torch.cond as a plain `if` (accepting what Dynamo refuses), then `after(out, fn)`."""

    def __init__(self, spec, after=lambda out, fn: out):
        super().__init__(spec)
        self.after = after

    def wrap(self, fn):
        @functools.wraps(fn)
        def run(*args):
            real, torch.cond = torch.cond, _plain_cond
            try:
                return self.after(fn(*args), fn)
            finally:
                torch.cond = real

        return run


def _judge_accepting(after=lambda out, fn: out):
    from dynfuzz.generators.case import Case

    spec = CompileSpec(compiler="identity")
    return judge(Case(ILLEGAL_PROGRAM, **CASE_KW), _AcceptsIllegal(spec, after), spec)


def test_accepting_an_illegal_program_with_the_reference_result_is_not_a_finding():
    assert _kinds(_judge_accepting()) == []


def test_a_silently_wrong_result_on_an_illegal_program_is_a_miscompile():
    result = _judge_accepting(lambda out, fn: out + 0.125)
    assert _kinds(result) == [("illegal", "miscompile")]
    assert result.findings[0].details[0].startswith("out")

    def drop_log(out, fn):
        fn.__globals__["LOG"].clear()
        return out

    result = _judge_accepting(drop_log)
    assert _kinds(result) == [("illegal", "miscompile")]
    assert any("LOG" in d for d in result.findings[0].details)
    assert any("plain-Python" in d for d in result.findings[0].details)


def test_which_torch_runtime_errors_count_as_documented_refusals():
    def exc(type_, message, tb=""):
        return ExcInfo(type_, "torch._dynamo.exc", message, traceback=tb)

    assert clean_refusal(exc("UncapturedHigherOrderOpError", "This higher order operator doesn't work"))
    assert clean_refusal(exc("TorchRuntimeError", "RuntimeError when making fake tensor call",
                             "When merging two branches' output in torch.cond, expected same dtype"))
    assert not clean_refusal(exc("TorchRuntimeError", "RuntimeError when making fake tensor call",
                                 "cond(...): got AssertionError('can only be of (Tensor, int, SymInt)')"))
    assert not clean_refusal(exc("InternalTorchDynamoError", "KeyError: 'proxy'"))
    assert not clean_refusal(exc("AssertionError", ""))
    # a 2.5.1 repro: its illegal cond reduced away, the documented limit of compiled autograd was filed a crash
    assert clean_refusal(exc("RuntimeError", "compiled_autograd does not support create_graph"))
    assert not clean_refusal(exc("RuntimeError", "compiled_autograd does not support retain_grad"))
    # the same limit re-raised by Dynamo's fake-tensor run (torch.func.grad_and_value under compiled autograd)
    assert clean_refusal(exc("TorchRuntimeError", "Failed running call_function <function _autograd_grad>(...):\n"
                                                  "compiled_autograd does not support create_graph"))


# ---- sizes across the predicate's boundary with dim 0 marked dynamic ----------------------------

MARKED = [c for c in CASES if {"mark-dynamic", "mark-dynamic-late"} & c.tags]


def _marked_and_varying(case):
    ns = {"__name__": "program"}
    exec(compile(case.source, "<program>", "exec"), ns)
    calls = [ns["inputs"]("cpu", i) for i in range(ns.get("CALLS", 2))]
    marked = [{k for k, t in enumerate(args) if 0 in getattr(t, "_dynamo_dynamic_indices", ())} for args in calls]
    varying = {k for k in range(len(calls[0])) if len({tuple(args[k].shape) for args in calls}) > 1}
    return ns, marked, varying


def test_mark_dynamic_marks_exactly_the_inputs_whose_size_varies():
    assert any("mark-dynamic" in c.tags for c in MARKED) and any("mark-dynamic-late" in c.tags for c in MARKED)
    for case in MARKED:
        ns, marked, varying = _marked_and_varying(case)
        assert varying and "dynamic" not in ns.get("COMPILE_OPTIONS", {}), case.source
        first = varying if "mark-dynamic" in case.tags else set()
        assert marked == [first] + [varying] * (len(marked) - 1), case.source


@pytest.mark.slow
def test_a_marked_input_crosses_the_size_cut_without_recompiling_or_diverging():
    from torch._dynamo.testing import CompileCounter

    legal = [c for c in MARKED if "mark-dynamic" in c.tags and c.intended_error is None
             and "pred-size" in c.tags and "unbacked-float" not in c.tags
             and "cond-unbacked-branches" not in c.tags]  # they need the capture_scalar_outputs drawn with them
    assert legal
    for case in legal[:2]:
        ns, _, _ = _marked_and_varying(case)
        torch._dynamo.reset()
        counter = CompileCounter()
        fn = torch.compile(ns["f"], backend=counter, **ns.get("COMPILE_OPTIONS", {}))
        frames = []
        for i in range(ns.get("CALLS", 2)):
            fn(*ns["inputs"]("cpu", i))
            frames.append(counter.frame_count)
        assert frames == frames[:1] * len(frames), (frames, case.source)  # one graph serves every size
        spec = CompileSpec(compiler="torch")
        assert judge(case, make_compiler(spec), spec).findings == [], case.source


@settings(max_examples=30, database=None, suppress_health_check=list(HealthCheck))
@given(st.data())
def test_branch_locals_with_only_a_private_operand_do_not_choose_from_nothing(data):
    """Seed 303012802 (family mix, about 1 in 13,000 draws): a `def` branch whose operands are all 0-d,
    beside a size-varying private operand, chose a sized operand from an empty list (ValueError). The
    seed no longer draws that program once fragments are added, so the situation is built directly."""
    b = Builder()
    params = [TensorVar("a0", ())]
    site = Site(params, "s0", 6, [], False)
    stmts: list = []
    caps = _branch_locals(data.draw, b, site, params, "s1", stmts, want_size=True, want_unbacked=False)
    assert [c.kind for c in caps] == ["size"] and "s1.size(0)" in render_stmt(stmts[0])


def test_a_cond_program_that_needs_its_plain_if_rendering_is_reduced_with_it(monkeypatch):
    """The reducer edits the program and makes eager's rendering anew from each candidate (such a program used to
    be left whole); the generator's rendering is the rule it remakes it by."""
    from dynfuzz.generators.case import Case
    from dynfuzz.triage import minimize as minimize_module
    from dynfuzz.triage.repro_twin import cond_as_if, derives_twin

    for case in CASES:
        if case.eager_source:
            assert derives_twin(case.source, case.eager_source), case.source
    padded = ILLEGAL_PROGRAM.replace("    return torch.cond(", "    u = x * 3\n    v = torch.tanh(u) + 1\n"
                                     "    w = (v * 2).sum()\n    return torch.cond(")
    case = Case(padded, eager_source=cond_as_if(padded), intended_error="UncapturedHigherOrderOpError")
    spec = CompileSpec(compiler="identity")
    double = _AcceptsIllegal(spec, lambda out, fn: out + 0.125)
    monkeypatch.setattr(minimize_module, "make_compiler", lambda spec: double)
    wanted = {f.signature for f in judge(case, double, spec).findings}
    assert wanted and not wanted & {f.signature for f in judge(replace(case, eager_source=None), double, spec).findings}
    m = minimize_module.minimize(case, spec, budget=60)
    assert m.case.eager_source is not None and "torch.cond(" in m.case.source
    assert "tanh" not in m.case.source and "w = " not in m.case.source, m.case.source
    assert m.case.eager_source == cond_as_if(m.case.source)


def test_a_difference_torch_documents_is_no_miscompile_of_an_illegal_program_either():
    """Dynamo marks the parameters and buffers of the modules it traces with `_dynamo_static_input_type`; the
    outputs and effects oracles excuse that one attribute (oracles/policy.py), and a 2.5.1 run filed it through
    the illegal-program oracle, which did not ask the policy, as an illegal program accepted."""
    def mark(out, fn):
        out._dynamo_static_input_type = "unguarded"
        return out

    assert _kinds(_judge_accepting(mark)) == []

    def other(out, fn):
        out.some_attribute = 1
        return out

    assert _kinds(_judge_accepting(other)) == [("illegal", "miscompile")]
