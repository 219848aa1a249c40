"""Devices: `--device cuda` runs eager and compiled on CUDA, `--cross-device` compares the CUDA run with
CPU eager (per-dtype cross-device tolerances), and findings say which device they need. Without CUDA the
`cuda` tests skip (tests/conftest.py says why) and the CLI refuses in one line."""
import json
import subprocess
import sys
import textwrap

import pytest
import torch
from dynfuzz.cli import main
from dynfuzz.generators.case import Case
from dynfuzz.oracles import policy
from dynfuzz.run.compilers import CompileSpec, make_compiler
from dynfuzz.run.judge import judge
from dynfuzz.run.multi_backend import CROSS_DEVICE, backend_of
from dynfuzz.triage.triangulate import Layering, layer_sentence

PROGRAM = """
    import torch
    def f(x, w):
        y = torch.tanh(x @ w) * 2
        return y.sum(0), y.relu()
    def inputs(device, call=0):
        x = torch.linspace(-1.0, 1.0, 12, device=device).reshape(3, 4)
        return (x, torch.linspace(0.5, -0.5, 8, device=device).reshape(4, 2))
"""

DEVICE_DEPENDENT = """
    import torch
    def f(x):
        return x * (2.0 if x.is_cuda else 1.0)
    def inputs(device, call=0):
        return (torch.linspace(-1.0, 1.0, 6, device=device),)
"""


def run(source: str, **spec_kw):
    spec = CompileSpec(**spec_kw)
    return judge(Case(source=textwrap.dedent(source)), make_compiler(spec), spec)


@pytest.mark.skipif(torch.cuda.is_available(), reason="this machine has CUDA")
def test_without_cuda_the_cli_says_so_in_one_line(capsys):
    assert main(["fuzz", "--device", "cuda", "--cases", "1"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "CUDA is not available" in err[0]


def test_cross_device_needs_a_cuda_run(capsys):
    assert main(["fuzz", "--cross-device", "--cases", "1"]) == 2
    assert "needs --device cuda" in capsys.readouterr().err


def test_tolerances_are_per_dtype_and_looser_across_devices():
    for dtype in (torch.float16, torch.bfloat16, torch.float32, torch.float64):
        same = policy.tolerance(dtype, "eager")
        across = policy.tolerance(dtype, "eager", cross_device=True)
        assert across[0] >= same[0] and across[1] >= same[1]
    assert policy.tolerance(torch.int32, "inductor", cross_device=True) == (0.0, 0.0)


def test_random_values_differ_across_devices_by_design():
    obs = policy.Observations(None, None, "eager", extra={"cross_device": True, "rng_used": True})
    assert policy.rule_for(obs, "out", "values").name == "cross-device-random-numbers"
    obs.extra["rng_used"] = False
    assert policy.rule_for(obs, "out", "values") is None


def test_a_layer_that_needs_cuda_says_so():
    layering = Layering("inductor", {"inductor": "reproduces", "inductor@cpu": "agrees"}, device="cuda")
    assert layering.tag == "inductor/cuda" and "Needs CUDA" in layering.sentence
    assert backend_of(layering.tag) == "inductor"
    assert "Needs" not in layer_sentence("inductor")


@pytest.mark.cuda
def test_cuda_runs_eager_and_compiled_on_the_gpu():
    result = run(PROGRAM, device="cuda", backend="aot_eager")
    assert result.findings == [], [f.title for f in result.findings]


@pytest.mark.cuda
@pytest.mark.inductor
def test_cross_device_agrees_on_a_correct_program():
    result = run(PROGRAM, device="cuda", backend="inductor", cross_device=True)
    assert result.findings == [], [f.title for f in result.findings]
    assert "layer:cross-device:run" in result.timings


@pytest.mark.cuda
def test_cross_device_reports_what_only_the_cpu_comparison_shows():
    assert run(DEVICE_DEPENDENT, device="cuda").findings == []  # CUDA eager and compiled agree
    found = run(DEVICE_DEPENDENT, device="cuda", cross_device=True).findings
    assert [f.layer for f in found] == [CROSS_DEVICE] and "CPU eager" in found[0].message


@pytest.mark.cuda
@pytest.mark.slow
def test_a_cuda_campaign_from_the_command_line(tmp_path):
    out = tmp_path / "out"
    done = subprocess.run([sys.executable, "-m", "dynfuzz", "fuzz", "--device", "cuda", "--cases", "6",
                           "--workers", "1", "--no-db", "--no-progress", "--out", str(out), "--budget", "300s"],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    summary = json.loads((out / "summary.json").read_text())
    assert summary["device"] == "cuda" and summary["cases"] == 6
