"""Export as a way of compiling (harness/run/export_runner.py): programs drawn with the `export` setting are
exported at their call's arguments (strict `torch.export`, `torch._dynamo.export` with and without
`aten_graph`) and judged on their outputs and errors only.

Checked here: the share and shape of export programs, a clean export in each mode judged without findings,
export's documented refusals skipped, what export leaves behind in the program's state never becoming a
harness error, the repro rendering the export call, and (slow) a short campaign of the family finding the
export mutant, which survives with the construct switched off.
"""
from __future__ import annotations

import ast
import subprocess
import sys
from collections import Counter
from functools import lru_cache

import pytest
from dynfuzz.generators import case_seed, draw_case
from dynfuzz.generators.case import Case
from dynfuzz.generators.export.modes import EXPORT_MODES
from dynfuzz.oracles import Finding
from dynfuzz.run.compilers import CompileSpec, make_compiler
from dynfuzz.run.judge import judge
from dynfuzz.triage.repro import metadata_for, render_repro

from tests.test_mutants_cells import campaign, mutant_finding

MUTANT = "export-outputs-mismatched"
TWO_OUTPUTS = '''\
import torch


def f(x):
    return torch.sin(x) * 2, torch.cos(x)


def inputs(device, call=0):
    return (torch.linspace(-1.0, 1.0, 3, device=device),)


CALLS = 1
COMPILE_OPTIONS = {{'export': {mode!r}}}
'''


def _judge(source: str):
    spec = CompileSpec()
    return judge(Case(source=source, entry="f", tags=frozenset({"export"})), make_compiler(spec), spec)


@lru_cache(maxsize=1)
def mix():
    return tuple(draw_case(case_seed(47, i)) for i in range(600))


def test_export_programs_have_a_share_of_the_default_mix_and_one_call():
    cases = [c for c in mix() if "export" in c.tags]
    assert len(cases) >= 0.02 * len(mix())
    modes = Counter()
    for case in cases:
        assigned = {n.targets[0].id: ast.literal_eval(n.value) for n in ast.parse(case.source).body
                    if isinstance(n, ast.Assign) and isinstance(n.targets[0], ast.Name)
                    and n.targets[0].id in ("CALLS", "COMPILE_OPTIONS")}
        assert assigned["CALLS"] == 1, case.source
        modes[assigned["COMPILE_OPTIONS"]["export"]] += 1
    assert set(modes) == set(EXPORT_MODES), modes


@pytest.mark.parametrize("mode", EXPORT_MODES)
def test_a_clean_export_is_judged_without_findings(mode):
    result = _judge(TWO_OUTPUTS.format(mode=mode))
    assert result.findings == [] and result.skipped is None and result.eager_ok


@pytest.mark.parametrize("mode", EXPORT_MODES)
def test_a_graph_break_is_exports_refusal_not_a_finding(mode):
    source = TWO_OUTPUTS.format(mode=mode).replace("    return torch.sin", "    torch._dynamo.graph_break()\n"
                                                                       "    return torch.sin")
    result = _judge(source)
    assert result.findings == []
    assert result.skipped and result.skipped.startswith(f"refused by export ({mode})")


def test_export_judges_outputs_only():
    """A global written in the frame is lost by export (its side effects are not replayed), by design; the
    fake tensor Dynamo leaves in a user `__setattr__`'s object is not snapshotted (no harness error)."""
    source = TWO_OUTPUTS.format(mode="dynamo").replace("def f(x):\n", '''\
class Logged:
    def __setattr__(self, name, value):
        super().__setattr__(name, value)


LOG = Logged()
SEEN = []


def f(x):
    LOG.last = torch.tanh(x)
    SEEN.append(1)
''')
    result = _judge(source)
    assert result.findings == [] and result.skipped is None


def test_an_autograd_function_output_is_judged_on_its_values():
    source = TWO_OUTPUTS.format(mode="strict").replace("def f(x):\n", '''\
class Square(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * x

    @staticmethod
    def backward(ctx, grad):
        return grad


def f(x):
    x = x.requires_grad_()
    return Square.apply(torch.tanh(x)), x + 1
''').replace("    return torch.sin(x) * 2, torch.cos(x)\n", "")
    assert _judge(source).findings == []


@pytest.mark.parametrize("mode", EXPORT_MODES)
def test_the_repro_exports_as_the_campaign_did(tmp_path, mode):
    case = Case(source=TWO_OUTPUTS.format(mode=mode), entry="f", tags=frozenset({"export"}))
    finding = Finding("outputs", "miscompile", "call 0: out[0] values differ", "out[]:values", call=0,
                      details=("out[0]: values: expected '[0.0]', got '[1.0]'",))
    spec = CompileSpec()
    text = render_repro(case, finding, spec, metadata_for(case, finding, spec))
    assert f'exported(ns["f"], {mode!r})' in text and 'torch.compile(ns[' not in text
    path = tmp_path / "repro.py"
    path.write_text(text)
    done = subprocess.run([sys.executable, str(path)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]


@pytest.mark.slow
def test_a_short_campaign_of_the_family_finds_the_mutant(tmp_path):
    assert mutant_finding(campaign(tmp_path / "on", MUTANT, 30, "export"), MUTANT, "export") is not None


@pytest.mark.slow
def test_without_export_the_mutant_survives(tmp_path):
    assert mutant_finding(campaign(tmp_path / "off", MUTANT, 30, "export", disable="export"), MUTANT, None) is None


AOT_MUTANT = "aot-guard-args-reversed"  # a guard failure on the compiled-for arguments: an exceptions finding


@pytest.mark.slow
def test_a_short_campaign_of_the_family_finds_the_aot_mutant(tmp_path):
    repros = campaign(tmp_path / "on", AOT_MUTANT, 60, "export")
    assert mutant_finding(repros, AOT_MUTANT, "export-aot", oracles=("exceptions",)) is not None


@pytest.mark.slow
def test_without_export_the_aot_mutant_survives(tmp_path):
    repros = campaign(tmp_path / "off", AOT_MUTANT, 60, "export", disable="export")
    assert mutant_finding(repros, AOT_MUTANT, None, oracles=("exceptions",)) is None
