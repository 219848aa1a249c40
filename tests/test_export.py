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
from dynfuzz.run.export_runner import EXPORT_CALLS
from dynfuzz.run.judge import judge
from dynfuzz.triage.repro import metadata_for, render_report, render_repro
from dynfuzz.triage.repro_meta import script_of

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


def _needs_aot_compile(mode: str) -> None:
    """Mode `aot` needs `torch.compile(...).aot_compile`, added in torch 2.9: skipped, saying so, on an older one."""
    import torch

    if mode == "aot" and not hasattr(torch.compile(lambda x: x), "aot_compile"):
        pytest.skip(f"torch {torch.__version__} has no torch.compile(...).aot_compile (added in 2.9)")


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
    _needs_aot_compile(mode)
    result = _judge(TWO_OUTPUTS.format(mode=mode))
    assert result.findings == [] and result.skipped is None and result.eager_ok


@pytest.mark.parametrize("mode", EXPORT_MODES)
def test_a_graph_break_is_exports_refusal_not_a_finding(mode):
    _needs_aot_compile(mode)
    source = TWO_OUTPUTS.format(mode=mode).replace("    return torch.sin", "    torch._dynamo.graph_break()\n"
                                                                       "    return torch.sin")
    result = _judge(source)
    assert result.findings == []
    assert result.skipped and result.skipped.startswith(f"refused by export ({mode})")


REFUSED = {  # what export documents it cannot take: a deliberate skip, with its reason
    "a non-pytree input or output": ("class Box:\n    def __init__(self, t):\n        self.t = t\n\n\n",
                                     "def f(b):\n    return torch.sin(b.t) * 2, torch.cos(b.t)\n",
                                     "(Box(torch.linspace(-1.0, 1.0, 3, device=device)),)"),
    "data-dependent": ("", "def f(x):\n    if x.sum() > 0:\n        return x * 2, x\n    return x, x\n",
                                 "(torch.linspace(-1.0, 1.0, 3, device=device),)"),
    "an nn.Parameter constructed in the frame": ("", "def f(x):\n    p = torch.nn.Parameter(x * 2)\n"
                                                     "    return p * x, x\n",
                                                 "(torch.linspace(-1.0, 1.0, 3, device=device),)"),
}


def _program(head: str, body: str, args: str, mode: str) -> str:
    return (f"import torch\n\n\n{head}{body}\n\ndef inputs(device, call=0):\n    return {args}\n\n\n"
            f"CALLS = 1\nCOMPILE_OPTIONS = {{'export': {mode!r}}}\n")


@pytest.mark.parametrize("what", sorted(REFUSED))
def test_what_export_documents_it_refuses_is_a_skip_not_a_finding(what):
    result = _judge(_program(*REFUSED[what], "strict"))
    assert result.findings == [] and result.eager_ok
    assert result.skipped and result.skipped.startswith("refused by export (strict): ")
    assert what.lower() in result.skipped.lower(), result.skipped


@pytest.mark.parametrize("mode", ["strict", "dynamo"])
def test_another_refusal_by_export_is_a_finding(mode):
    """`Tensor.resize_()` is no refusal export documents: its Unsupported is an `exceptions/unsupported` finding
    (a refusal, listed apart from bugs), never a skip."""
    result = _judge(_program("", "def f(x):\n    y = x.clone()\n    y.resize_(6)\n    return y, x\n",
                             "(torch.linspace(-1.0, 1.0, 3, device=device),)", mode))
    assert result.skipped is None
    assert [(f.oracle, f.kind) for f in result.findings] == [("exceptions", "unsupported")]
    assert f"export ({mode}) refused" in result.findings[0].message


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
    return Square.apply(torch.tanh(x)), x + 1
''').replace("    return torch.sin(x) * 2, torch.cos(x)\n", "").replace(
        "torch.linspace(-1.0, 1.0, 3, device=device)", "torch.linspace(-1.0, 1.0, 3, device=device).requires_grad_()")
    result = _judge(source)
    assert result.findings == [] and result.skipped is None  # judged, not refused (requires_grad_() in the frame was)


@pytest.mark.parametrize("mode", EXPORT_MODES)
def test_the_repro_exports_as_the_campaign_did(tmp_path, mode):
    _needs_aot_compile(mode)
    case = Case(source=TWO_OUTPUTS.format(mode=mode), entry="f", tags=frozenset({"export"}))
    finding = Finding("outputs", "miscompile", "call 0: out[0] values differ", "out[]:values", call=0,
                      details=("out[0]: values: expected '[0.0]', got '[1.0]'",))
    spec = CompileSpec()
    text = render_repro(case, finding, spec, metadata_for(case, finding, spec))
    inline = mode in ("dynamo", "dynamo-aten")  # one call's arguments: exported in one line, no helper pasted
    assert ("exported(f)" in text) != inline and ("def exported" in text) != inline, text
    assert ("graph_module(*inputs(" in text) == inline and "torch.compile(f," not in text
    report = render_report(case, finding, spec, metadata_for(case, finding, spec), text)
    assert f"`{EXPORT_CALLS[mode]}` (device=cpu) diverges from eager" in report, report  # not `torch.compile`
    others = {"strict": "torch.export.export(", "aot": "aot_compile(", "dynamo": "torch._dynamo.export("}
    assert all((word in script_of(text)) == (m == mode or {m, mode} == {"dynamo", "dynamo-aten"})
               for m, word in others.items()), text
    path = tmp_path / "repro.py"
    path.write_text(text)
    done = subprocess.run([sys.executable, str(path)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]


AOT_MUTANT = "aot-guard-args-reversed"  # a guard failure on the compiled-for arguments: an exceptions finding
# Both export mutants share one trial of the family with export on (60 cases: the aot mutant's first finding
# needs more than the 30 the other's does) and one with it off.
EXPORT_MUTANTS, CASES = (MUTANT, AOT_MUTANT), 60


@pytest.mark.slow
def test_a_short_campaign_of_the_family_finds_the_mutant(trial):
    assert trial(EXPORT_MUTANTS, "export", CASES).finds(MUTANT, "export")


@pytest.mark.slow
def test_without_export_the_mutant_survives(trial):
    assert not trial(EXPORT_MUTANTS, "export", CASES, disable="export").finds(MUTANT)


@pytest.mark.slow
def test_a_short_campaign_of_the_family_finds_the_aot_mutant(trial):
    assert trial(EXPORT_MUTANTS, "export", CASES).finds(AOT_MUTANT, "export-aot", oracles=("exceptions",))


@pytest.mark.slow
def test_without_export_the_aot_mutant_survives(trial):
    assert not trial(EXPORT_MUTANTS, "export", CASES, disable="export").finds(AOT_MUTANT, oracles=("exceptions",))
