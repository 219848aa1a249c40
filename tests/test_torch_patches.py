"""What dynfuzz changes in the torch under test is a switch, and recorded (Note [Dynamo's logging speed-ups are a
switch, and recorded] in harness/run/torch_compat.py): `--pristine-torch` runs torch as shipped, the gate always
does, and `summary.json`, every repro's DYNFUZZ block and the report header say which speed-ups, observers and
Dynamo mutants were in effect, with the Hypothesis release and dynfuzz's commit. A stray DYNFUZZ_MUTANTS stops
`fuzz` and `gate` before they start."""
from __future__ import annotations

import json
import subprocess
import textwrap
from pathlib import Path

import hypothesis
import pytest
from dynfuzz.cli import main
from dynfuzz.generators.case import Case
from dynfuzz.mutants import ENV
from dynfuzz.oracles import Finding
from dynfuzz.run import torch_compat
from dynfuzz.run.compilers import CompileSpec, make_compiler
from dynfuzz.run.judge import judge
from dynfuzz.run.torch_compat import PRISTINE_ENV, SPEEDUPS, original, pristine_tree, speedup_states
from dynfuzz.triage.repro import metadata_for

ROOT = Path(__file__).resolve().parents[1]


def _current(name: str):
    import importlib

    module, attr = SPEEDUPS[name]
    return getattr(importlib.import_module(module), attr, None)


@pytest.fixture
def restore_speedups():
    yield
    torch_compat.set_speedups(not torch_compat.pristine())


@pytest.mark.parametrize("name", sorted(SPEEDUPS))
def test_each_speedup_is_a_switch_that_puts_back_what_torch_shipped(name, restore_speedups):
    if original(name) is None:  # torch 2.5.1 has neither function: nothing to swap, recorded as such
        assert speedup_states()[name] == "not applicable"
        return
    torch_compat.set_speedups(True)
    assert _current(name) is not original(name)
    torch_compat.set_speedups(False)
    assert _current(name) is original(name)
    torch_compat.set_speedups(True)
    assert _current(name) is not original(name)


def test_make_compiler_follows_the_pristine_switch_of_the_process_tree(monkeypatch, restore_speedups):
    monkeypatch.delenv(PRISTINE_ENV, raising=False)
    applicable = [n for n in SPEEDUPS if original(n) is not None]
    with pristine_tree(True):
        make_compiler(CompileSpec())
        assert all(_current(n) is original(n) for n in applicable)
        assert set(speedup_states().values()) <= {"off", "not applicable"}
    assert PRISTINE_ENV not in __import__("os").environ  # put back for the rest of the process
    make_compiler(CompileSpec())
    assert all(_current(n) is not original(n) for n in applicable)
    assert set(speedup_states().values()) <= {"applied", "not applicable"}


def test_a_speedup_whose_target_this_torch_lacks_is_not_applicable(monkeypatch):
    monkeypatch.setitem(SPEEDUPS, "missing-target", ("torch._dynamo.exc", "no_such_function_in_any_release"))
    torch_compat.set_speedups(True)  # nothing to swap: no error
    assert speedup_states()["missing-target"] == "not applicable"
    monkeypatch.delitem(torch_compat._originals, "missing-target")


def _fuzz(out: Path, *extra: str) -> dict:
    code = main(["fuzz", "--cases", "2", "--workers", "0", "--no-db", "--no-progress", "--no-minimize",
                 "--budget", "120s", "--family", "basic", "--out", str(out), *extra])
    assert code in (0, 1)
    return json.loads((out / "summary.json").read_text())


def test_summary_and_report_record_the_patches_hypothesis_and_commit(tmp_path, monkeypatch, restore_speedups):
    monkeypatch.delenv(PRISTINE_ENV, raising=False)
    monkeypatch.delenv(ENV, raising=False)
    patched, pristine = _fuzz(tmp_path / "patched"), _fuzz(tmp_path / "pristine", "--pristine-torch")
    assert patched["torch_patches"]["pristine"] is False and pristine["torch_patches"]["pristine"] is True
    for name in SPEEDUPS:
        applicable = original(name) is not None
        assert patched["torch_patches"]["speedups"][name] == ("applied" if applicable else "not applicable")
        assert pristine["torch_patches"]["speedups"][name] == ("off" if applicable else "not applicable")
    assert patched["torch_patches"]["observers"] == ["compile-counter", "log-capture"]
    assert patched["torch_patches"]["mutants"] == []
    assert patched["hypothesis"] == hypothesis.__version__
    head = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
    assert head and patched["dynfuzz_commit"].removesuffix("-dirty") == head
    header = (tmp_path / "pristine" / "report.md").read_text().split("## Totals")[0]
    assert "torch as shipped (no speed-ups)" in header and f"Hypothesis {hypothesis.__version__}" in header
    assert PRISTINE_ENV not in __import__("os").environ  # the flag's setting does not outlive the command
    if any(original(n) is not None for n in SPEEDUPS):
        assert "speed-ups applied: " in (tmp_path / "patched" / "report.html").read_text()


def test_every_repro_records_the_patches_and_any_active_mutant(monkeypatch):
    case = Case(source="import torch\ndef f(x):\n    return x\ndef inputs(device, call=0):\n"
                       "    return (torch.ones(1),)\n", seed=3)
    f = Finding("outputs", "miscompile", "call 0: out differs", "sig0", "high", call=0)
    monkeypatch.setenv(ENV, "cell-by-name")
    with pristine_tree(True):
        meta = metadata_for(case, f, CompileSpec())
    assert meta["torch_patches"]["mutants"] == ["cell-by-name"] and meta["torch_patches"]["pristine"] is True
    assert meta["hypothesis"] == hypothesis.__version__ and "dynfuzz_commit" in meta
    from dynfuzz.run.torch_compat import describe_patches

    assert "DYNAMO MUTANTS ACTIVE: cell-by-name" in describe_patches(meta["torch_patches"])


@pytest.mark.parametrize("verb", ["fuzz", "gate"])
def test_a_stray_mutant_in_the_environment_stops_fuzz_and_gate(verb, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv(ENV, "cell-by-name")
    code = main([verb, "--cases", "0", "--workers", "0", "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err.strip()
    assert code == 2 and len(err.splitlines()) == 1
    assert f"{ENV}=cell-by-name" in err and "--mutant" in err


def test_the_same_mutant_named_with_mutant_is_no_stray(tmp_path, monkeypatch):
    monkeypatch.setenv(ENV, "cell-by-name")
    assert main(["fuzz", "--cases", "0", "--workers", "0", "--no-db", "--no-progress", "--no-minimize",
                 "--out", str(tmp_path / "out"), "--mutant", "cell-by-name"]) == 0


def test_the_gate_runs_pristine(tmp_path, monkeypatch, restore_speedups):
    from dynfuzz.gate import GateConfig, run_gate

    monkeypatch.delenv(PRISTINE_ENV, raising=False)
    empty = tmp_path / "corpus"
    empty.mkdir()
    # one worker process: what earlier tests left in this process (they patch torch in place) is not the gate's
    code = run_gate(GateConfig(budget=120, cases=2, workers=1, corpus=[empty], out=tmp_path / "gate",
                               minimize_budget=None, families=("basic",)))
    errors = [p.read_text()[:3000] for p in (tmp_path / "gate" / "campaign").glob("harness-errors/*.txt")]
    assert code in (0, 1), errors
    summary = json.loads((tmp_path / "gate" / "campaign" / "summary.json").read_text())
    assert summary["torch_patches"]["pristine"] is True
    assert set(summary["torch_patches"]["speedups"].values()) <= {"off", "not applicable"}


def test_the_guard_latency_profiling_warms_no_state_the_guard_oracle_tests(restore_speedups):
    """Decided by running it both ways: under the drawn dict-tag setting (guard checks that skip a module whose
    dict tags did not change), programs with a module, mutated between calls, and generated programs with the
    setting, judged with guard perturbations, give the same findings, compiled frames and perturbations with
    the profiling step on (pristine) and off. Dynamo runs the new guards on the same locals right before it
    profiles them (its "guard failed on the same frame it was created" check), so the profiling run is a
    second check of an unchanged scope."""
    from dynfuzz.generators import case_seed, draw_case

    module_program = textwrap.dedent("""\
        import torch

        class M(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.lin = torch.nn.Linear(3, 3)
                self.inner = torch.nn.Sequential(torch.nn.ReLU())
                self.scale = 2.0

            def forward(self, x):
                return self.inner(self.lin(x)) * self.scale

        torch.manual_seed(0)
        m = M()

        def f(x):
            return m(x) + 1

        def inputs(device, call=0):
            return (torch.linspace(-1, 1, 6, device=device).reshape(2, 3),)

        CALLS = 4

        def between(call):
            if call == 2:
                m.scale = 3.0
            if call == 3:
                m.inner.append(torch.nn.Tanh())

        DYNAMO_CONFIG = {"use_recursive_dict_tags_for_guards": True}
        """)
    drawn = [c for c in (draw_case(case_seed(7, i), ("basic",)) for i in range(100))
             if "config-recursive-dict-tags" in c.tags]
    cases = [Case(source=module_program)] + drawn[:4]
    spec = CompileSpec(guards=True, reference=True)

    def outcomes(pristine: bool) -> list:
        with pristine_tree(pristine):
            compiler = make_compiler(spec)
            results = [judge(c, compiler, spec) for c in cases]
        return [(sorted(f.signature for f in r.findings), r.frames, r.reference.get("perturbations")) for r in results]

    on, off = outcomes(True), outcomes(False)
    assert on == off
    assert on[0][1] >= 2  # the module program recompiled when its module changed: its guards were exercised
    assert any(perturbations for *_, perturbations in on[1:]), on
