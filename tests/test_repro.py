"""Repros: for every oracle and kind, the rendered script's verdict equals the oracle's.

A torch-only script cannot show a broken-compiler double's bug, so these tests run the rendered
script with `torch.compile` replaced by the double (exit 1 expected) and with real torch, a correct
compiler for these programs (exit 0 expected). Real torch bugs are covered by the corpus entries
(tests/test_corpus.py), and a few scripts here also run as real subprocesses through `verify_repro`.
"""
from __future__ import annotations

import json
import runpy
import tempfile
import textwrap
import warnings
from pathlib import Path

import pytest
import torch
from dynfuzz.generators.case import Case
from dynfuzz.oracles.checks import expression, parse_detail
from dynfuzz.oracles.model import Finding
from dynfuzz.run.compilers import CompileSpec, make_compiler
from dynfuzz.run.judge import judge
from dynfuzz.triage.repro import metadata_for, read_program, render_report, render_repro, verify_repro
from dynfuzz.triage.repro_meta import code_lines, script_of, write_repro

OUTPUT_PROGRAM = """
    import torch
    def f(x):
        return x.sin() * 2, x.shape[0]
    def inputs(device, call=0):
        return (torch.linspace(-1, 1, 4, device=device),)
"""
EFFECT_PROGRAM = """
    import torch
    LOG = []
    def f(x):
        LOG.append(1)
        return x + 1
    def inputs(device, call=0):
        return (torch.ones(2, device=device),)
"""
GRAD_PROGRAM = """
    import torch
    def f(x):
        return (x * x).sum(0)
    def inputs(device, call=0):
        return (torch.linspace(-1, 1, 6, device=device).reshape(2, 3).requires_grad_(),)
"""
RECALL_PROGRAM = """
    import torch
    SCALE = 2.0
    def f(x):
        return x * SCALE
    def between(call):
        global SCALE
        SCALE = 3.0
    def inputs(device, call=0):
        return (torch.ones(2, device=device),)
"""
# Real torch diverging on purpose: `is_compiling()` is True only while Dynamo traces.
RAISES_ONLY_EAGER = """
    import torch
    def f(x):
        if not torch.compiler.is_compiling():
            raise ValueError("eager only")
        return x + 1
    def inputs(device, call=0):
        return (torch.ones(2, device=device),)
"""
RAISES_OTHER_TYPE = RAISES_ONLY_EAGER.replace("return x + 1", "return x + torch.ones(5)")  # a RuntimeError
ILLEGAL_COND = """
    import torch
    def f(x):
        return torch.cond(x.sum() > 0, lambda a: a.add_(1), lambda a: a - 1, (x,))
    def inputs(device, call=0):
        return (torch.ones(3, device=device),)
"""
ILLEGAL_EAGER = ILLEGAL_COND.replace(
    "torch.cond(x.sum() > 0, lambda a: a.add_(1), lambda a: a - 1, (x,))",
    "(lambda a: a.add_(1))(x) if bool(x.sum() > 0) else (lambda a: a - 1)(x)")


def _case(source: str, **kw) -> Case:
    return Case(source=textwrap.dedent(source), **kw)


def _finding(case: Case, compiler: str, fullgraph: bool = False) -> tuple[Finding, CompileSpec]:
    spec = CompileSpec(compiler=compiler, fullgraph=fullgraph)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        found = judge(case, make_compiler(spec), spec).findings
    assert found, f"{compiler} produced no finding"
    return found[0], spec


def run_script(text: str, double: str | None = None, monkeypatch=None) -> int:
    """The script's exit status, run in this process: 1 when its check fails, 0 when it passes.

    With `double`, `torch.compile` is that broken compiler (the frame counter the recompile check reads
    follows the double's frame count)."""
    if double is not None:
        def fake_compile(fn, backend=None, **kwargs):
            compiler = make_compiler(CompileSpec(compiler=double))
            compiler.reset()
            compiled = compiler.compile(fn, {})

            def call(*args):
                try:
                    return compiled(*args)
                finally:
                    if hasattr(backend, "frame_count"):
                        backend.frame_count = compiler.frames()
            return call

        monkeypatch.setattr(torch, "compile", fake_compile)
    torch._dynamo.reset()
    try:
        with warnings.catch_warnings(), tempfile.TemporaryDirectory() as tmp:
            warnings.simplefilter("ignore")
            path = Path(tmp) / "repro.py"
            path.write_text(script_of(text))
            runpy.run_path(str(path), run_name="__main__")
    except AssertionError:
        return 1
    finally:
        if double is not None:
            monkeypatch.undo()
    return 0


def assert_plain(text: str) -> None:
    """The program is plain top-level code: no program string, no exec, no linecache, no metadata block."""
    script = script_of(text)
    for word in ("exec(", "linecache", "DYNFUZZ", "PROGRAM = ", "dynfuzz-meta"):
        assert word not in script, script


CASES = [  # (name, program, eager program, double, fullgraph, expected (oracle, kind))
    ("outputs", OUTPUT_PROGRAM, None, "perturb-output", False, ("outputs", "miscompile")),
    ("effects", EFFECT_PROGRAM, None, "drop-effect", False, ("effects", "effect-lost")),
    ("exceptions-crash", OUTPUT_PROGRAM, None, "crash", False, ("exceptions", "crash")),
    ("grads", GRAD_PROGRAM, None, "perturb-grad", False, ("grads", "grad-mismatch")),
    ("recompiles", OUTPUT_PROGRAM, None, "recompile-always", False, ("recompiles", "over-guard")),
    ("recall", RECALL_PROGRAM, None, "stale-constants", False, ("outputs", "miscompile")),
    ("illegal-crash", ILLEGAL_COND, ILLEGAL_EAGER, "crash", False, ("illegal", "crash")),
]


@pytest.mark.parametrize("name,program,eager,double,fullgraph,expected", CASES, ids=[c[0] for c in CASES])
def test_repro_verdict_equals_the_oracle_with_each_double(name, program, eager, double, fullgraph, expected,
                                                          monkeypatch):
    case = _case(program, eager_source=textwrap.dedent(eager) if eager else None,
                 intended_error="RuntimeError" if eager else None)
    f, spec = _finding(case, double, fullgraph)
    assert (f.oracle, f.kind) == expected
    text = render_repro(case, f, spec, metadata_for(case, f, spec))
    assert "import dynfuzz" not in text and "from dynfuzz" not in text
    assert_plain(text)
    assert code_lines(text) <= 30, text
    assert run_script(text, double, monkeypatch) == 1, text
    assert run_script(text) == 0, text  # real torch is a correct compiler for these programs
    if name == "recall":
        assert "for call in range(2):" in text and 'ns["between"](call)' in text
    if f.kind == "crash" and f.oracle == "exceptions":  # eager raised nowhere: the crash, uncaught, fails it
        lean = render_repro(case, f, spec, metadata_for(case, f, spec), eager_ok=True)
        assert "except Exception" not in lean and "isinstance(c_out" not in lean and "assert_close" in lean, lean
        assert code_lines(lean) < code_lines(text) and code_lines(lean) <= 12, lean
        with pytest.raises(Exception, match="simulated internal error"):
            run_script(lean, double, monkeypatch)
        assert run_script(lean) == 0, lean
    if f.oracle not in ("exceptions", "guards", "illegal"):  # minimization saw eager raise in no call
        lean = render_repro(case, f, spec, metadata_for(case, f, spec), eager_ok=True)
        assert "except Exception" not in lean and code_lines(lean) <= code_lines(text), lean
        assert run_script(lean, double, monkeypatch) == 1, lean
        if name == "grads":  # one call and its backward pass need no `run` helper
            assert "def run(" not in lean and "    backward(c_out)" in lean, lean
        assert run_script(lean) == 0, lean


@pytest.mark.parametrize("program,kind", [(RAISES_ONLY_EAGER, "missing-exception"),
                                          (RAISES_OTHER_TYPE, "exception-mismatch")])
def test_exception_repros_with_real_torch_diverging(program, kind):
    case = _case(program)
    f, spec = _finding(case, "torch")
    assert (f.oracle, f.kind) == ("exceptions", kind)
    text = render_repro(case, f, spec, metadata_for(case, f, spec))
    assert run_script(text) == 1
    fixed = text.replace("if not torch.compiler.is_compiling():", "if True:")  # both raise the same error
    assert run_script(fixed) == 0


def test_spurious_exception_repro_with_real_torch():
    program = RAISES_OTHER_TYPE.replace("if not torch.compiler", "if torch.compiler").replace(
        'raise ValueError("eager only")', "return x + torch.ones(5)")
    program = program.replace("return x + torch.ones(5)\n    def", "return x\n    def")
    case = _case(program)
    f, spec = _finding(case, "torch")
    assert (f.oracle, f.kind) == ("exceptions", "spurious-exception")
    text = render_repro(case, f, spec, metadata_for(case, f, spec))
    assert run_script(text) == 1
    assert run_script(text.replace("if torch.compiler.is_compiling():", "if False:")) == 0


def test_illegal_program_correctly_refused_exits_0():
    """Real torch refuses the illegal cond (a documented error): the repro of an illegal finding passes."""
    case = _case(ILLEGAL_COND, eager_source=textwrap.dedent(ILLEGAL_EAGER), intended_error="RuntimeError")
    f, spec = _finding(case, "crash")
    assert f.oracle == "illegal"
    text = render_repro(case, f, spec, metadata_for(case, f, spec))
    script = script_of(text)  # the plain-if rendering it is compared with, as plain definitions
    assert "def f_eager(x):" in script and "if bool(x.sum() > 0)" in script and "run(f_eager)" in script
    assert_plain(text)
    assert run_script(text) == 0
    torch_spec = CompileSpec()
    assert judge(case, make_compiler(torch_spec), torch_spec).findings == []


def test_effects_after_an_error_on_both_sides_are_compared(monkeypatch):
    """Both modes raise IndexError; the effects oracle still compares state, and so does the repro.

    On torch 2.13 the compiled call raises while tracing and never replays the append that eager did
    before raising: a real divergence on the error path, which the repro shows too."""
    program = """
        import torch
        LOG = []
        def f(x):
            LOG.append(1)
            return x[10]
        def inputs(device, call=0):
            return (torch.ones(2, device=device),)
    """
    case = _case(program)
    f, spec = _finding(case, "torch")
    assert (f.oracle, f.kind) == ("effects", "effect-lost")
    text = render_repro(case, f, spec, metadata_for(case, f, spec))
    assert "except Exception as e:" in text
    assert run_script(text) == 1
    assert run_script(text, "identity", monkeypatch) == 0


def test_paths_become_python_expressions():
    assert expression("out[0]", False) == "out[0]"
    assert expression("args[1].attr", True) == "c_args[1].attr"
    assert expression("state['G']['k']", False) == "ns['G']['k']"
    assert expression("state['g'].<cells>.n.cell_contents", True) == \
        "c_ns['g'].__closure__[c_ns['g'].__code__.co_freevars.index('n')].cell_contents"
    assert parse_detail("state['x'][0]: value: expected 1, got 2") == ("state['x'][0]", "value", "1", "2")


def test_a_dict_keyed_by_an_object_is_reached_by_position():
    """An optimizer's state is keyed by its parameters: the snapshot encodes such a key (`("@", k)`), which no
    program can write, so the differing entry's path is positional and its expression finds the same tensor."""
    import torch
    from dynfuzz.oracles.snapshot import diff, take

    def state(scale):
        p = torch.nn.Parameter(torch.ones(2))
        opt = torch.optim.SGD([p], lr=0.1, momentum=0.9)
        p.grad = torch.ones(2) * scale
        opt.step()
        return {"P": p, "OPT": opt}

    eager, compiled = state(1.0), state(2.0)
    paths = [d[0] for d in diff(take(eager), take(compiled))]
    entry = next(p for p in paths if "momentum_buffer" in p)
    assert entry.startswith("['OPT'].state.<values>[0]"), paths
    ns, c_ns = eager, compiled  # noqa: F841  (the names the expressions read)
    momentum = eval(expression("state" + entry, False))
    assert torch.equal(momentum, next(iter(eager["OPT"].state.values()))["momentum_buffer"])
    assert not torch.equal(eval(expression("state" + entry, True)), momentum)


def test_written_repro_reproduces_in_a_subprocess_and_reads_back(tmp_path):
    """`verify_repro` on real torch scripts: the corpus's float-sign bug reproduces, a correct program is flaky."""
    from dynfuzz.paths import corpus_dir

    assert verify_repro(corpus_dir() / "float_sign_no_guard.py", CompileSpec()) == "reproduces"
    case = _case(RAISES_ONLY_EAGER)
    f, spec = _finding(case, "torch")
    path = tmp_path / "repro.py"
    write_repro(path, render_repro(case, f, spec, metadata_for(case, f, spec)).replace(
        "if not torch.compiler.is_compiling():", "if True:"))
    assert json.loads((tmp_path / "repro.json").read_text())["oracle"] == "exceptions"  # the metadata is beside it
    assert_plain(path.read_text())
    assert verify_repro(path, spec) == "flaky"
    saved = read_program(path)
    assert saved.meta["oracle"] == "exceptions" and "if True:" in saved.case.source
    assert "__main__" not in saved.case.source and "c_out" not in saved.case.source  # the program, not the driver
    assert not saved.case.source.startswith("#")  # nor the header: a re-rendering writes its own
    broken = path.read_text().replace("c_out, c_args = run(", "c_out, c_args = undefined_name(")
    path.write_text(broken)
    assert verify_repro(path, spec) == "error"  # a script that breaks is not a reproduction


@pytest.mark.slow
def test_double_repro_is_verified_through_dynfuzz_check(tmp_path):
    case = _case(OUTPUT_PROGRAM)
    f, spec = _finding(case, "perturb-output")
    path = tmp_path / "repro.py"
    path.write_text(render_repro(case, f, spec, metadata_for(case, f, spec)))
    assert verify_repro(path, spec) == "reproduces"
    assert verify_repro(path, CompileSpec(compiler="identity")) == "flaky"


def test_report_is_a_pt2_bug_report():
    case = _case(OUTPUT_PROGRAM)
    f, spec = _finding(case, "perturb-output")
    meta = metadata_for(case, f, spec)
    text = render_repro(case, f, spec, meta)
    report = render_report(case, f, spec, meta, text)
    assert report.startswith("# ") and f.oracle in report.splitlines()[0]
    for part in ("```python", "### Expected vs actual", "### Versions", f"torch {meta['torch']}", "python "):
        assert part in report
    first = report.split("```python\n", 1)[1].split("```", 1)[0]  # the block PyTorch's triage extracts
    assert first.strip() == script_of(text).strip() and "dynfuzz-meta" not in report
    facts = report.split("```python", 1)[0]
    assert "- **Tier:** miscompile" in facts and "- **Fails on releases:** not checked" in facts


GUARD_PROGRAM = """
    import torch
    SCALE = 2.0
    def f(x, n):
        return x * SCALE + n
    def inputs(device, call=0):
        return (torch.ones(2, device=device), 3)
"""


@pytest.mark.parametrize("double,perturbation", [("stale-constants", "ns['SCALE'] = 5.0"),
                                                 ("stale-shape", None)])
def test_guard_repro_replays_the_perturbation(double, perturbation, monkeypatch):
    """A guard-unsound finding: the repro calls, makes the same change to the state, calls again, and checks."""
    case = _case(GUARD_PROGRAM)
    spec = CompileSpec(compiler=double, guards=True, reference=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        found = [f for f in judge(case, make_compiler(spec), spec).findings if f.oracle == "guards"]
    assert found and all(f.kind == "guard-unsound" for f in found)
    for f in found:
        text = render_repro(case, f, spec, metadata_for(case, f, spec))
        assert "for call in range(2):" in text and "if call:  # the change" in text
        if perturbation and "SCALE" in f.details[0]:
            assert perturbation in text
        assert run_script(text, double, monkeypatch) == 1, text
        assert run_script(text) == 0, text


def test_guard_over_guard_repro_counts_frames(monkeypatch):
    f = Finding("guards", "over-guard", "recompiled after L['x'] with new values", "k", severity="low", call=1,
                details=("perturbation: L['x'] with new values", "0/0: tensor 'x' values changed"))
    case = _case(GUARD_PROGRAM)
    text = render_repro(case, f, CompileSpec(), metadata_for(case, f, CompileSpec()))
    assert "args[0] = args[0].detach() * -0.5 + 0.25" in text and "frames[1] == frames[0]" in text
    assert run_script(text, "recompile-always", monkeypatch) == 1
    assert run_script(text) == 0


def test_unrenderable_divergence_points_at_dynfuzz_check():
    f = Finding("guards", "guard-unsound", "stale", "k", call=1,
                details=("perturbation: L['k'].cell_contents = 3", "reference guard: ..."))
    case = _case(GUARD_PROGRAM)
    text = render_repro(case, f, CompileSpec(), metadata_for(case, f, CompileSpec()))
    assert "dynfuzz check" in text and "raise SystemExit(2)" in text
    assert read_program_text(text)["check"] == "dynfuzz"


def read_program_text(text: str) -> dict:
    from dynfuzz.triage.repro_meta import meta_of_text

    return meta_of_text(text)


# Real torch bugs a campaign files (corpus entries that still diverge on the torch they were recorded on): the
# campaign's triage (`triage_one`: minimize, explain, render, verify) must write a plain repro of each kind.
TRIAGED = ["wrong_value_tensor_local_unsqueeze", "set_subclass_global_add_lost",
           "nullcontext_value_across_graph_break_crash"]


@pytest.mark.parametrize("name", TRIAGED)
def test_a_minimized_repro_is_plain_short_and_exits_1_in_a_fresh_process(name, tmp_path):
    import subprocess
    import sys

    from dynfuzz.paths import corpus_dir
    from dynfuzz.triage.corpus_replay import recorded_elsewhere
    from dynfuzz.triage.queue import triage_one

    saved = read_program(corpus_dir() / f"{name}.py")
    if recorded_elsewhere(saved.meta):
        pytest.skip(f"recorded on torch {saved.meta['torch']}")
    spec = CompileSpec(backend=saved.meta["backend"], fullgraph=bool(saved.meta["fullgraph"]))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        found = [f for f in judge(saved.case, make_compiler(spec), spec).findings if f.oracle != "harness"]
    assert found, f"{name} no longer diverges here"
    t = triage_one(saved.case, found[0], spec, budget=30)
    assert t.verdict == "reproduces", t.repro
    assert_plain(t.repro)
    assert code_lines(t.repro) <= 30, script_of(t.repro)
    path = write_repro(tmp_path / "repro.py", t.repro)
    done = subprocess.run([sys.executable, str(path)], capture_output=True, text=True, timeout=300)
    crashed = "\n    c_out = " in done.stderr and "/torch/" in done.stderr  # a crash: torch's traceback ends it
    assert done.returncode == 1 and ("AssertionError" in done.stderr or crashed), done.stderr[-3000:]
    assert read_program(path).meta["signature"] == t.finding.signature  # its metadata, from repro.json


def test_a_cases_dynamo_config_is_patched_once_and_reads_back(tmp_path):
    """A minimized program may have lost its DYNAMO_CONFIG line while its case still runs under it: the repro
    patches it once, around the compiled run, and its metadata keeps it for replay."""
    case = _case(OUTPUT_PROGRAM, dynamo_config_items=(("capture_scalar_outputs", True),))
    f = Finding("outputs", "miscompile", "call 0: out[1] value differ", "k", call=0,
                details=("out[1]: value: expected 4, got 5",))
    text = render_repro(case, f, CompileSpec(), metadata_for(case, f, CompileSpec()))
    script = script_of(text)
    assert script.count("torch._dynamo.config.patch(capture_scalar_outputs=True)") == 1
    assert "with torch._dynamo.config.patch(capture_scalar_outputs=True):\n        c_out = torch.compile" in script
    saved = read_program(write_repro(tmp_path / "repro.py", text))
    assert saved.case.dynamo_config == {"capture_scalar_outputs": True}
    assert run_script(text) == 0


REBIND_PROGRAM = """
    import torch
    COUNT = 0
    def f(x):
        global COUNT
        COUNT += 1
        return x + 1
    def inputs(device, call=0):
        return (torch.ones(2, device=device),)
"""


def test_a_stateful_repro_copies_the_globals_in_one_line_and_reads_them_live(monkeypatch):
    """Eager's fresh copy is `runpy.run_path` (one line, where importlib took three), and a state check reads
    the globals eager's functions write, not the copy run_path returns: a rebound global read from that copy
    would say 0 while torch, compiling correctly, leaves 1. A program whose eager run goes through Dynamo
    (`torch.cond`) keeps a module registered by name."""
    case = _case(REBIND_PROGRAM)
    finding, spec = _finding(case, "drop-effect")
    script = script_of(render_repro(case, finding, spec, metadata_for(case, finding, spec)))
    assert 'eager = runpy.run_path(__file__, run_name="eager_copy")' in script and "exec_module" not in script
    assert 'eager["f"].__globals__' in script
    assert run_script(script, "drop-effect", monkeypatch) == 1
    assert run_script(script) == 0
    cond = _case(ILLEGAL_COND.replace("a.add_(1)", "a + 1")
                 .replace("return torch", "LOG.append(1)\n        return torch")
                 .replace("import torch", "import torch\n    LOG = []"))
    finding, spec = _finding(cond, "drop-effect")
    script = script_of(render_repro(cond, finding, spec, metadata_for(cond, finding, spec)))
    assert "spec.loader.exec_module(eager)" in script and "runpy" not in script


def test_one_call_needs_no_between_a_trace_exception_raises_and_state_is_read_by_name(monkeypatch):
    """`between` runs only before a second call, so a one-call repro has no `run` helper for it; an exception
    raised inside the trace where eager raised nothing ends the script with torch's traceback, as a crash does,
    and the values decide once it is fixed; a state check reads the compiled run's globals by their names."""
    spec = CompileSpec()
    one_call = Finding("outputs", "miscompile", "call 0: out[0] values differ", "out[]:values", call=0,
                       details=("out[0]: values: expected '[0.0]', got '[1.0]'",))
    case = _case(RECALL_PROGRAM)
    script = script_of(render_repro(case, one_call, spec, metadata_for(case, one_call, spec), eager_ok=True))
    assert "def run(" not in script and "between(" not in script.split("__main__")[1], script
    trace = Finding("exceptions", "trace-exception", "call 0: TypeError raised inside the trace, eager raised "
                    "nothing", "trace TypeError Unsupported", call=0)
    case = _case(OUTPUT_PROGRAM)
    script = script_of(render_repro(case, trace, spec, metadata_for(case, trace, spec), eager_ok=True))
    assert "except Exception" not in script and "assert_close(tensors(c_out), tensors(out)" in script, script
    assert run_script(script) == 0  # torch traces it: the values agree
    case = _case(EFFECT_PROGRAM)
    finding, spec = _finding(case, "drop-effect")
    script = script_of(render_repro(case, finding, spec, metadata_for(case, finding, spec), eager_ok=True))
    assert "c_ns" not in script and "len(LOG) == len(ns['LOG'])" in script, script
    assert run_script(script, "drop-effect", monkeypatch) == 1 and run_script(script) == 0
