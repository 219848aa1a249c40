"""Which layer broke: triangulation across eager / aot_eager / inductor, the layer-placed mutants it must
localize, and `--backends` campaigns. Mutants patch torch for the whole process, so tests that apply one
run in a subprocess."""
import json
import os
import subprocess
import sys
import textwrap

import pytest
from dynfuzz.cli import main
from dynfuzz.generators.case import Case
from dynfuzz.mutants import load
from dynfuzz.oracles import finding
from dynfuzz.run.compilers import CompileSpec, make_compiler
from dynfuzz.run.judge import judge
from dynfuzz.run.multi_backend import in_layer_order, layer_summary, spec_for
from dynfuzz.triage.triangulate import UNLOCATED, triangulate

TANH_PROGRAM = """
    import torch
    def f(x):
        return torch.tanh(x) * 2 + 1, x.cos()
    def inputs(device, call=0):
        return (torch.linspace(-1.0, 1.0, 6, device=device),)
"""

TRIANGULATE_WITH_MUTANT = """
import json, sys, textwrap
from dynfuzz.mutants import apply
apply([sys.argv[1]])
from dynfuzz.generators.case import Case
from dynfuzz.run.compilers import CompileSpec, make_compiler
from dynfuzz.run.judge import judge
from dynfuzz.triage.triangulate import triangulate
case = Case(source=textwrap.dedent(sys.argv[3]))
spec = CompileSpec(backend=sys.argv[2])
found = judge(case, make_compiler(spec), spec).findings
print(json.dumps(triangulate(case, found[0], spec).as_dict() if found else None))
"""


def triangulate_under(mutant: str, backend: str) -> dict:
    done = subprocess.run([sys.executable, "-c", TRIANGULATE_WITH_MUTANT, mutant, backend, TANH_PROGRAM],
                          capture_output=True, text=True, timeout=300, env={**os.environ, "PYTHONHASHSEED": "0"})
    assert done.returncode == 0, done.stderr[-2000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result is not None, f"the {mutant} mutant was not detected at all on {backend}"
    return result


def test_both_layer_mutants_are_registered_with_their_layer():
    registry = load()
    assert registry["aot-eager-wrong-output"].layer == "aot_eager"
    assert registry["inductor-tanh-lowering"].layer == "inductor"


@pytest.mark.slow
@pytest.mark.aot_eager
def test_broken_aot_eager_is_localized_to_aot_eager():
    result = triangulate_under("aot-eager-wrong-output", "aot_eager")
    assert result["layer"] == "aot_eager"
    assert result["verdicts"] == {"eager": "agrees", "aot_eager": "reproduces", "inductor": "agrees"}
    assert result["sentence"].startswith("Dynamo alone is fine; diverges from aot_eager on")


@pytest.mark.slow
@pytest.mark.inductor
def test_broken_inductor_lowering_is_localized_to_inductor():
    result = triangulate_under("inductor-tanh-lowering", "inductor")
    assert result["layer"] == "inductor"
    assert result["verdicts"]["eager"] == result["verdicts"]["aot_eager"] == "agrees"
    assert result["verdicts"]["inductor"] == "reproduces"


def test_a_bug_in_dynamo_itself_shows_on_every_backend_and_is_dynamos():
    # The perturb-output double breaks what the compiled callable returns whatever the backend, as a bug
    # in Dynamo's graph would: the first layer, eager, already diverges.
    case = Case(source=textwrap.dedent(TANH_PROGRAM))
    spec = CompileSpec(compiler="perturb-output")
    found = judge(case, make_compiler(spec), spec).findings
    layering = triangulate(case, found[0], spec)
    assert layering.layer == "dynamo" and set(layering.verdicts.values()) == {"reproduces"}
    assert "backend=eager" in layering.sentence
    quick = triangulate(case, found[0], spec, stop_at_first=True)
    assert quick.layer == "dynamo" and quick.verdicts == {"eager": "reproduces", "aot_eager": "not run",
                                                           "inductor": "not run"}


def test_a_program_that_agrees_everywhere_is_not_located():
    case = Case(source=textwrap.dedent(TANH_PROGRAM))
    fake = finding("outputs", "miscompile", "out differs", "out:values")
    layering = triangulate(case, fake, CompileSpec(), backends=("eager", "aot_eager"))
    assert layering.layer == UNLOCATED and set(layering.verdicts.values()) == {"agrees"}


def test_harness_findings_have_no_layer():
    crash = finding("harness", "crash", "worker died", "worker exit -11")
    assert triangulate(Case(source="x = 1"), crash, CompileSpec()).layer == UNLOCATED


def test_backends_flag_is_validated_and_ordered_by_layer(capsys):
    assert main(["fuzz", "--backends", "eager,tvm", "--cases", "0"]) == 2
    assert capsys.readouterr().err.strip().startswith("dynfuzz: error: unknown backend 'tvm' in --backends")
    assert in_layer_order(["inductor", "eager", "aot_eager", "eager"]) == ("eager", "aot_eager", "inductor")


def test_layered_findings_are_triaged_on_the_backend_they_first_showed_on():
    spec = CompileSpec(backend="eager", backends=("eager", "aot_eager", "inductor"))
    assert spec_for(spec, "aot_eager").backend == "aot_eager" and spec_for(spec, "aot_eager").backends == ()
    assert spec_for(spec, "dynamo").backend == "eager"
    assert spec_for(CompileSpec(backend="inductor"), None).backend == "inductor"


def test_layer_costs_are_summed_per_backend():
    sums = {"layer:eager:compile": 2.0, "layer:eager:run": 1.0, "layer:inductor:compile": 8.0, "compile": 2.0}
    rows = layer_summary(sums, 4, {"inductor": 1})
    assert rows["inductor"] == {"layer": "inductor", "compile_seconds": 8.0, "mean_compile_seconds": 2.0,
                                "findings": 1}
    assert rows["eager"]["layer"] == "dynamo" and rows["eager"]["findings"] == 0


@pytest.mark.slow
@pytest.mark.aot_eager
def test_a_backends_campaign_attributes_findings_to_their_layer_and_times_each(tmp_path):
    out = tmp_path / "out"
    done = subprocess.run([sys.executable, "-m", "dynfuzz", "fuzz", "--backends", "eager,aot_eager",
                           "--mutant", "aot-eager-wrong-output", "--family", "basic", "--cases", "4",
                           "--workers", "1", "--no-db", "--no-progress", "--out", str(out), "--budget", "30s"],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    summary = json.loads((out / "summary.json").read_text())
    assert summary["backends"] == ["eager", "aot_eager"]
    assert summary["by_layer"].get("aot_eager", 0) > 0
    assert set(summary["layers"]) == {"eager", "aot_eager"}
    assert summary["layers"]["aot_eager"]["compile_seconds"] > 0
    wrong_values = [u for u in summary["unique_findings"] if u["oracle"] in ("outputs", "effects")]
    assert wrong_values and {u["layer"] for u in wrong_values} == {"aot_eager"}
