"""Construct 8 (unbacked sizes) and the DYNAMO_CONFIG program convention it needs: a case carries the
`torch._dynamo.config` settings its compiled calls run under; eager never sees them."""
from __future__ import annotations

import textwrap

import torch
from dynfuzz.generators import case_seed, draw_case
from dynfuzz.run.compilers import CompileSpec, make_compiler
from dynfuzz.run.execute import PLAN_NAMES, observe, program_state

ITEM_PROGRAM = textwrap.dedent("""
    import torch

    SEEN = []


    def f(x):
        u = (x > 0).sum().item()
        return x * u


    def inputs(device, call=0):
        return (torch.linspace(-1.0, 1.0, 5, device=device),)
    """)
WITH_CONFIG = ITEM_PROGRAM + "\n\nDYNAMO_CONFIG = {'capture_scalar_outputs': True}\n"


def _compiled(source: str):
    compiler = make_compiler(CompileSpec())
    compiler.reset()
    return observe(source, "f", "cpu", compiler, "compiled")


def test_dynamo_config_applies_to_the_compiled_calls():
    """`.item()` breaks the graph by default; under the program's DYNAMO_CONFIG it is traced."""
    plain, configured = _compiled(ITEM_PROGRAM), _compiled(WITH_CONFIG)
    assert plain.graph_breaks >= 1
    assert configured.graph_breaks == 0 and configured.extra["dynamo_config"] == {"capture_scalar_outputs": True}
    assert not torch._dynamo.config.capture_scalar_outputs, "the patch must not outlive the call"


def test_dynamo_config_never_reaches_eager_and_is_not_program_state():
    obs = observe(WITH_CONFIG, "f", "cpu", None, "eager")
    assert "dynamo_config" not in obs.extra
    assert "DYNAMO_CONFIG" in PLAN_NAMES
    assert "DYNAMO_CONFIG" not in program_state({"DYNAMO_CONFIG": {}, "G": 1})


def _unbacked_cases(n: int = 120):
    cases = [draw_case(case_seed(41, i), ("conds",)) for i in range(n)]
    return [c for c in cases if "unbacked-config" in c.tags]


def test_unbacked_cases_carry_their_config_in_the_case_and_the_source():
    cases = _unbacked_cases()
    assert len(cases) >= 20
    for case in cases:
        assert case.dynamo_config["capture_scalar_outputs"] is True
        assert "DYNAMO_CONFIG = {" in case.source
        if {"unbacked-nonzero", "unbacked-unique"} & case.tags:
            assert case.dynamo_config["capture_dynamic_output_shape_ops"] is True
    tags = set().union(*(c.tags for c in cases))
    for tag in ("unbacked-item", "unbacked-nonzero", "unbacked-unique", "unbacked-py-branch",
                "unbacked-check-shape", "unbacked-cond-pred", "unbacked-branch-body"):
        assert tag in tags, tag


def test_unbacked_values_go_each_way_across_the_call_plan_and_run_in_eager():
    seen_both = 0
    for case in _unbacked_cases(60):
        obs = observe(case.eager_source or case.source, case.entry, "cpu", None, "eager", keep_live=True)
        errors = [c.error for c in obs.calls if c.error]
        if case.intended_error is None:
            assert obs.setup_error is None and not errors, (case.seed, errors[:1])
        u = [c.outputs[-1] for c in obs.calls if isinstance(c.outputs, tuple) and isinstance(c.outputs[-1], int)]
        seen_both += len(set(u)) >= 2
    assert seen_both >= 5


def test_no_python_branch_on_an_unbacked_int_under_fullgraph():
    """Under fullgraph, Dynamo refuses data-dependent branching by design (a UserError), never a finding."""
    for case in _unbacked_cases():
        if "unbacked-py-branch" in case.tags:
            assert "'fullgraph': True" not in case.source, case.seed
