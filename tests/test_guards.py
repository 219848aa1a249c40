"""The guard oracle: perturbations derived from reference guards catch unsound and over-eager caches."""
from __future__ import annotations

import textwrap

import pytest
from dynfuzz.generators.case import Case
from dynfuzz.run.compilers import CompileSpec, make_compiler
from dynfuzz.run.execute import load_program
from dynfuzz.run.guard_probes import guard_check, perturbations
from dynfuzz.run.judge import judge
from dynfuzz.run.reference_trace import trace_case

CLOSURE_GLOBAL = textwrap.dedent('''
    import torch
    SCALE = 2.0
    UNUSED = 5
    def make():
        k = 3
        def f(x):
            if x.shape[0] > 2:
                return x.cos() * k * SCALE
            return x.sin()
        return f
    f = make()
    def inputs(device, call=0):
        return (torch.linspace(-1, 1, 4, device=device),)
''')

WITH_BREAK = textwrap.dedent('''
    import torch
    OFFSET = 1
    def f(x):
        y = x * 2 + OFFSET
        torch._dynamo.graph_break()
        return y.sin() + OFFSET
    def inputs(device, call=0):
        return (torch.linspace(-1, 1, 4, device=device),)
''')


def run(source: str, compiler: str):
    spec = CompileSpec(compiler=compiler)
    return judge(Case(source), make_compiler(spec), spec, only=("guards",), guards=True)


def test_perturbations_cover_each_guard_kind():
    case = Case(CLOSURE_GLOBAL)
    trace = trace_case(case)
    ns, _ = load_program(CLOSURE_GLOBAL, "t")
    plan = perturbations(trace, ("x",), ns)
    by_kind = {p.kind: p for p in plan}
    assert set(by_kind) == {"const-cell", "const-global", "size", "dtype", "values", "unread-global"}
    assert by_kind["size"].name == "L['x'] resized to (2,)"
    assert by_kind["size"].violates == "L['x'].size()[0] > 2"
    assert by_kind["const-cell"].violates == "L['k'] == 3"
    assert by_kind["unread-global"].violates is None and "UNUSED" in by_kind["unread-global"].name


def test_double_ignoring_value_guards_is_unsound():
    found = run(CLOSURE_GLOBAL, "stale-constants").findings
    unsound = {f.message.split(" (violates")[0] for f in found if f.kind == "guard-unsound"}
    assert unsound == {"stale compiled code after L['k'] = 4", "stale compiled code after G['SCALE'] = 5.0"}
    assert all(f.severity == "high" for f in found if f.kind == "guard-unsound")


def test_double_recompiling_every_call_over_guards():
    found = [f for f in run(CLOSURE_GLOBAL, "recompile-always").findings if f.kind == "over-guard"]
    assert {f.details[0] for f in found} == {"perturbation: L['x'] with new values",
                                            "perturbation: unread global UNUSED = 6"}
    assert all(f.severity == "low" for f in found)


def test_correct_compilers_have_no_guard_findings():
    assert run(CLOSURE_GLOBAL, "identity").findings == []


@pytest.mark.slow
def test_torch_compile_is_sound_and_precise_across_a_graph_break():
    for source in (CLOSURE_GLOBAL, WITH_BREAK):
        case = Case(source)
        spec = CompileSpec()
        results = guard_check(case, make_compiler(spec), trace_case(case))
        assert results and not any(r.error for r in results)
        violating = [r for r in results if r.violates]
        assert violating and all(not r.diffs for r in violating)
        assert all(r.recompiled for r in violating)
        neutral = [r for r in results if r.violates is None]
        assert neutral and all(not r.recompiled for r in neutral)
        assert all(r.would_hit is not None for r in neutral)  # offline check: the entry accepts the state
    gb = guard_check(Case(WITH_BREAK), make_compiler(CompileSpec()), trace_case(Case(WITH_BREAK)))
    glob = next(r for r in gb if r.kind == "const-global")
    assert any("OFFSET" in f for f in glob.failures)  # Dynamo's own guard text is kept


def test_a_perturbation_that_raises_is_a_counted_harness_error_never_dropped(tmp_path, monkeypatch):
    """Note [A perturbation that raises]: calls keep what torch raises as their result, so what escapes a
    perturbation is dynfuzz's own failure: an `oracle-error` the campaign counts among its harness errors (it
    used to become a note nothing counted), and never a finding."""
    from dynfuzz.campaign.campaign import Campaign, CampaignConfig
    from dynfuzz.run import guard_probes
    from dynfuzz.run.guard_probes import Perturbation

    def broken(ns, fn, args):
        raise KeyError("no such cell")

    monkeypatch.setattr(guard_probes, "perturbations",
                        lambda trace, params, ns: [Perturbation("SCALE = 5.0", "G['SCALE'] == 2.0", broken, "const")])
    result = run(CLOSURE_GLOBAL, "identity")
    assert [(f.oracle, f.kind) for f in result.findings] == [("harness", "oracle-error")]
    assert "guard perturbation SCALE = 5.0 raised KeyError" in result.findings[0].message

    import dynfuzz.campaign.campaign as campaign_module

    monkeypatch.setattr(campaign_module, "draw_case", lambda seed, families: Case(CLOSURE_GLOBAL, seed=seed))
    spec = CompileSpec(compiler="identity", guards=True)
    summary = Campaign(CampaignConfig(budget=60, out=tmp_path / "out", spec=spec, max_cases=1, progress=False,
                                      workers=0)).run()
    assert summary["harness_errors"] == {"oracle": 1} and summary["findings"] == 0
