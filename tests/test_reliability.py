"""A campaign never dies of its own errors, and the review defects stay fixed.

Each test names the failure it guards against; the crash-kind tests run a real campaign with a worker
pool against a test double (or a crash program) and check the case is saved, counted, and the
campaign still ends within its budget plus a small grace.
"""
from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest
from dynfuzz.generators.case import Case
from dynfuzz.oracles.effects import effects
from dynfuzz.oracles.model import Finding, Observations
from dynfuzz.run.execute import observe

# ---- review defects -------------------------------------------------------------------------------

_WRITES = """
import torch
LOG = []
def f(x):
    LOG.append(1)
    return x + 1
def inputs(device, call=0):
    return (torch.ones(2),)
def between(call):
    return list(LOG)
CALLS = 3
"""


def test_effects_oracle_returns_findings_only_not_raw_diffs():
    """`found` was rebound to each state root's diff list, so raw diffs leaked out with the finding."""
    eager = observe(_WRITES, "f", "cpu", None, "eager")
    dropped = observe(_WRITES.replace("    LOG.append(1)\n", ""), "f", "cpu", None, "eager")
    result = effects(Case(_WRITES), Observations(eager, dropped))
    assert result and all(isinstance(f, Finding) for f in result), result
    assert len(result) == 1


def test_replay_drops_a_saved_entry_whose_choices_run_out(tmp_path):
    """A redraw that runs out of recorded choices raises StopTest, a BaseException, not an Exception."""
    from dynfuzz.campaign.exampledb import FindingsDB
    from hypothesis.database import choices_to_bytes

    db = FindingsDB.at(tmp_path / "db", ())
    db.db.save(db.key, choices_to_bytes((0,)))
    assert db.replay_cases() == []
    assert list(db.db.fetch(db.key)) == []


def _workflow_commands() -> list[list[str]]:
    """Every `dynfuzz ...` command line in .github/workflows, continuation lines joined, `${{ }}` filled."""
    import re
    import shlex
    from pathlib import Path

    commands = []
    for wf in sorted((Path(__file__).parents[1] / ".github" / "workflows").glob("*.yml")):
        text = re.sub(r"\\\n\s*", " ", wf.read_text())
        text = re.sub(r'"?\$\{\w+\[@\]\}"?', "", text)  # a bash array of optional flags
        text = re.sub(r"\$\{\{[^}]*\}\}", "1", text).replace('"$f"', "x.py").replace("$f", "x.py")
        for line in text.splitlines():
            m = re.search(r"\bdynfuzz (fuzz|gate|replay|minimize|sample|check)\b[^|;>&]*", line)
            if m:
                commands.append(shlex.split(m.group(0))[1:])
    return commands


def test_workflow_commands_parse_with_the_cli():
    """nightly.yml passed `--progress=false`, which the CLI rejects."""
    from dynfuzz.cli import build_parser

    commands = _workflow_commands()
    assert len(commands) >= 3
    for argv in commands:
        build_parser().parse_args(argv)  # the one-line error is exit 2 (SystemExit) on a bad flag


def test_workflows_run_the_test_suite_before_the_gate_or_campaign():
    from pathlib import Path

    for wf in ("gate.yml", "nightly.yml"):
        text = (Path(__file__).parents[1] / ".github" / "workflows" / wf).read_text()
        first_dynfuzz = min(text.index(k) for k in ("dynfuzz gate --", "dynfuzz fuzz --") if k in text)
        assert "python -m pytest" in text[:first_dynfuzz], wf
        assert "|| true" not in text, wf


# ---- a campaign never dies of its own errors --------------------------------------------------------

_OK = """
import torch
def f(x):
    return x.sin() + 1
def inputs(device, call=0):
    return (torch.linspace(-1, 1, 4, device=device),)
"""


def _campaign(tmp_path, sources, workers=0, compiler="identity", **config):
    """A campaign over hand-written programs: draw number i gets `sources[i]` (an exception is raised)."""
    from dynfuzz.campaign import campaign as campaign_mod
    from dynfuzz.campaign.campaign import Campaign, CampaignConfig
    from dynfuzz.run.compilers import CompileSpec

    def draw(seed, families=()):
        src = sources[draw.calls % len(sources)]
        draw.calls += 1
        if isinstance(src, BaseException):
            raise src
        return Case(textwrap.dedent(src), seed=seed, families=families, tags=frozenset({"hand"}))

    draw.calls = 0
    config.setdefault("max_cases", len(sources))
    cfg = CampaignConfig(budget=config.pop("budget", 120), out=tmp_path / "out", workers=workers,
                         spec=CompileSpec(compiler=compiler), progress=False, **config)
    original = campaign_mod.draw_case
    campaign_mod.draw_case = draw
    try:
        return Campaign(cfg).run(), cfg.out
    finally:
        campaign_mod.draw_case = original


def _errors(out, kind):
    return sorted((out / "harness-errors").glob(f"{kind}-*.txt"))


def test_a_generator_exception_is_a_harness_error_and_the_campaign_goes_on(tmp_path):
    summary, out = _campaign(tmp_path, [_OK, ValueError("empty choice in _branch_locals"), _OK])
    assert summary["cases"] == 2
    assert summary["harness_errors"] == {"generator": 1}
    assert summary["findings"] == 0 and "harness" not in summary["by_oracle"]
    (record,) = _errors(out, "generator")
    text = record.read_text()
    assert "ValueError: empty choice in _branch_locals" in text and "dynfuzz sample --case-seed" in text


def test_an_inputs_failure_is_an_invalid_case_not_a_finding(tmp_path):
    broken = _OK.replace("return (torch.linspace(-1, 1, 4, device=device),)",
                         "return (torch.ones(2, 3, 4).t(),)")
    summary, out = _campaign(tmp_path, [broken, _OK])
    assert summary["cases"] == 2 and summary["findings"] == 0
    assert summary["harness_errors"] == {"invalid-case": 1}
    assert "inputs('cpu', 0) raised RuntimeError" in _errors(out, "invalid-case")[0].read_text()


def test_an_oracle_exception_is_a_harness_error_with_its_traceback(tmp_path, monkeypatch):
    from dynfuzz.oracles.registry import ORACLES

    def broken(case, obs, trace=None):
        return [][0]

    monkeypatch.setitem(ORACLES, "broken-for-test", broken)
    summary, out = _campaign(tmp_path, [_OK])
    assert summary["harness_errors"] == {"oracle": 1}
    assert summary["findings"] == 0 and summary["unique_findings"] == []
    assert "IndexError" in _errors(out, "oracle")[0].read_text()


def test_a_snapshot_failure_is_a_harness_error(tmp_path, monkeypatch):
    from dynfuzz.run import execute

    def take(*args, **kwargs):
        raise RecursionError("snapshot went too deep")

    monkeypatch.setattr(execute, "take", take)
    summary, out = _campaign(tmp_path, [_OK])
    assert summary["harness_errors"] == {"snapshot": 1} and summary["findings"] == 0
    assert "RecursionError: snapshot went too deep" in _errors(out, "snapshot")[0].read_text()


def test_harness_error_records_are_bounded_but_counts_exact(tmp_path):
    from dynfuzz.run.harness_errors import HarnessError, HarnessErrorLog

    log = HarnessErrorLog(tmp_path, per_kind=3)
    for seed in range(10):
        log.record(HarnessError("generator", "boom"), seed)
    assert log.summary() == {"generator": 10}
    assert len(list(tmp_path.glob("generator-*.txt"))) == 3


def test_torch_log_lines_are_captured_not_printed(capfd):
    import logging

    from dynfuzz.run.torch_logs import capture

    logger = logging.getLogger("torch._dynamo.convert_frame")
    with capture() as log:
        logger.error("E1122 a Dynamo internal error with a Traceback")
    assert "E1122 a Dynamo internal error" in log.text
    assert "E1122" not in capfd.readouterr().err


# ---- crash kinds: each saved and counted, the campaign ends in its budget plus a small grace ----------


def _worker_baseline() -> int:
    """The address space a fresh process reserves once torch and the judge are imported (0.7 GiB for torch 2.13's
    CPU wheel, 3.4 GiB for 2.5.1's CUDA wheel): a worker limit is only meaningful above it."""
    code = ("import torch, dynfuzz.run.judge\n"
            "print(next(int(l.split()[1]) for l in open('/proc/self/status') if l.startswith('VmPeak:')) * 1024)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    return max(int(done.stdout.strip().splitlines()[-1]), 1 << 30)


_ABORT = _OK.replace("    return x.sin() + 1", "    import os\n    os.abort()")
_SEGFAULT = _OK.replace("    return x.sin() + 1", "    import ctypes\n    return ctypes.string_at(0)")
_HANG = _OK.replace("    return x.sin() + 1", "    while True:\n        pass")
_MEMORY_HOG = _OK.replace("    return x.sin() + 1",
                          "    hog = []\n    while True:\n        hog.append(torch.ones(1 << 26))")


@pytest.mark.slow
def test_abort_segfault_hang_and_memory_exhaustion_are_saved_and_counted(tmp_path):
    import time

    start = time.monotonic()
    summary, out = _campaign(tmp_path, [_OK, _ABORT, _SEGFAULT, _HANG, _MEMORY_HOG, _OK], workers=2,
                             case_timeout=15.0, worker_memory=max(2 << 30, _worker_baseline() + (3 << 29)))
    assert summary["cases"] == 6
    assert summary["crashes"] == 2 and summary["hangs"] == 1
    assert summary["harness_errors"] == {"memory-limit": 1}
    crash_kinds = sorted(u["kind"] for u in summary["unique_findings"])
    assert crash_kinds.count("crash") >= 1 and "hang" in crash_kinds
    files = [u["file"] for u in summary["unique_findings"] if u["kind"] == "crash" and u["file"]]
    assert files and any("os.abort()" in (out / f).read_text() or "string_at" in (out / f).read_text() for f in files)
    assert "Fatal Python error" in "".join(p.read_text() for p in (out / "workers").glob("w*.log"))
    assert not list((out / "inflight").glob("*.py"))
    assert time.monotonic() - start < 300


@pytest.mark.slow
def test_a_case_running_past_the_budget_is_abandoned_within_the_grace(tmp_path):
    import time

    from dynfuzz.campaign.campaign import END_GRACE

    start = time.monotonic()
    summary, out = _campaign(tmp_path, [_HANG], workers=1, budget=3, case_timeout=300.0, max_cases=None)
    elapsed = time.monotonic() - start
    assert summary["unfinished"] == 1 and summary["hangs"] == 0 and summary["findings"] == 0
    assert summary["seconds"] < 3 + END_GRACE + 5, summary["seconds"]
    assert elapsed < 3 + END_GRACE + 60  # worker start-up included
    assert list((out / "inflight").glob("*.py"))  # left for --resume


def test_worker_memory_flag_parses_and_defaults_sensibly():
    from dynfuzz.budget import parse_size
    from dynfuzz.errors import UsageError
    from dynfuzz.run.isolation import default_worker_memory

    assert parse_size("4G") == 4 << 30 and parse_size("512M") == 512 << 20 and parse_size("off") is None
    with pytest.raises(UsageError):
        parse_size("lots")
    assert default_worker_memory(2, "cuda") is None
    assert default_worker_memory(2, "cpu") >= 4 << 30


# ---- torch internals behind one place ------------------------------------------------------------------

def test_no_torch_internals_outside_torch_compat():
    """Dynamo's private hooks are reached only through run/torch_compat.py (and run/torch_observers.py, which
    reads the counters and cache entries through it too and holds the behaviour observers)."""
    import re
    from pathlib import Path

    harness = Path(__file__).parents[1] / "harness"
    private = re.compile(r"from torch\._dynamo[\w.]* import .*(_debug_get_cache_entry_list|guard_failures|counters"
                         r"|CompileCounter)|\._import_module\b|torch\._dynamo\.(utils|testing|eval_frame)\.")
    offenders = [f"{p.relative_to(harness)}:{n}" for p in harness.rglob("*.py")
                 if p.name not in ("torch_compat.py", "torch_observers.py")
                 and "doubles" not in p.parts and "mutants" not in p.parts and "triage" not in p.parts
                 for n, line in enumerate(p.read_text().splitlines(), 1)
                 if private.search(line) and "torch_compat" not in line and not line.lstrip().startswith("#")]
    assert offenders == [], offenders


def test_a_missing_torch_api_is_a_one_line_note_naming_the_release(monkeypatch, capsys):
    import re

    import torch._dynamo.utils
    from dynfuzz.run import torch_compat

    monkeypatch.delattr(torch._dynamo.utils, "guard_failures")
    monkeypatch.setattr(torch_compat, "_notes", set())
    with pytest.raises(torch_compat.Unavailable, match=re.escape(f"torch {torch_compat.torch_release()} has no")):
        torch_compat.guard_failures()
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "guard-failure reasons skipped" in err[0] and "guard_failures" in err[0]


def test_torch_compat_hooks_work_on_this_torch():
    import torch
    from dynfuzz.run import torch_compat

    def f(x):
        return x.cos() + 1

    torch_compat.reset_dynamo()
    counter = torch_compat.compile_counter("eager")
    torch.compile(f, backend=counter)(torch.ones(3))
    assert counter.frame_count == 1
    (entry,) = torch_compat.cache_entries(f)
    assert torch_compat.guard_accepts(entry, {"x": torch.ones(3)})
    assert not torch_compat.guard_accepts(entry, {"x": torch.ones(3, dtype=torch.float64)})
    assert isinstance(torch_compat.guard_failures(), list)


def test_the_campaign_compile_cache_is_used_and_removed(tmp_path, monkeypatch):
    import os

    from dynfuzz.run.isolation import campaign_compile_cache

    monkeypatch.delenv("TORCHINDUCTOR_CACHE_DIR", raising=False)
    monkeypatch.delenv("TRITON_CACHE_DIR", raising=False)
    cleanup = campaign_compile_cache(tmp_path)
    assert os.environ["TORCHINDUCTOR_CACHE_DIR"].startswith(str(tmp_path / ".torch-cache"))
    cleanup()
    assert "TORCHINDUCTOR_CACHE_DIR" not in os.environ and not (tmp_path / ".torch-cache").exists()
    monkeypatch.setenv("TORCHINDUCTOR_CACHE_DIR", "/somewhere/chosen")
    monkeypatch.setenv("TRITON_CACHE_DIR", "/somewhere/chosen2")
    campaign_compile_cache(tmp_path)()
    assert os.environ["TORCHINDUCTOR_CACHE_DIR"] == "/somewhere/chosen"


def test_a_new_finding_carries_the_torch_log_of_its_case(tmp_path, monkeypatch):
    import logging

    from dynfuzz.oracles.registry import ORACLES

    def noisy(case, obs, trace=None):
        logging.getLogger("torch._dynamo.convert_frame").warning("W1122 a recompile warning from Dynamo")
        return []

    monkeypatch.setitem(ORACLES, "noisy-for-test", noisy)
    summary, out = _campaign(tmp_path, [_OK], compiler="perturb-output", minimize_budget=0)
    assert summary["cases"] == 1 and summary["unique_findings"]
    logs = list((out / "findings").rglob("*.torch.log"))
    assert logs and "W1122 a recompile warning" in logs[0].read_text()


def test_the_example_database_is_bounded(tmp_path, monkeypatch):
    from dynfuzz.campaign import exampledb

    monkeypatch.setattr(exampledb, "MAX_ENTRIES", 3)
    db = exampledb.FindingsDB.at(tmp_path / "db", ())
    for i in range(6):
        db.save(Case("x", choices=(i,)))
    assert len(list(db.db.fetch(db.key))) == 3 and db.dropped == 3


def test_sample_stats_counts_programs_that_do_not_draw_or_run(monkeypatch, capsys):
    """`dynfuzz sample --stats` died on a generator ValueError and on an inputs() calling t() on 3-D."""
    from dynfuzz import sample as sample_mod

    broken = _OK.replace("return (torch.linspace(-1, 1, 4, device=device),)", "return (torch.ones(2, 3, 4).t(),)")
    programs = [_OK, ValueError("empty choice"), broken, _OK]

    def draw(seed, families=()):
        src = programs[draw.calls]
        draw.calls += 1
        if isinstance(src, BaseException):
            raise src
        return Case(textwrap.dedent(src), seed=seed)

    draw.calls = 0
    monkeypatch.setattr(sample_mod, "draw_case", draw)
    assert sample_mod.sample(4, 0, (), stats=True, as_json=True) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["generator_errors"] == 1 and result["valid_fraction"] == 0.5
    assert {"generator raised ValueError", "InvalidCase"} <= {e["error"].split(":")[0] for e in
                                                             result["invalid_examples"]}


def test_minimization_delays_the_end_by_a_tenth_of_the_budget_within_bounds():
    """The soak (1 h) may end a minute late, a CI smoke run (60 s) only 10 s late: a fixed 60 s drain made a
    5-minute campaign take 368 s."""
    from dynfuzz.campaign.capacity import triage_grace

    assert [triage_grace(b) for b in (30, 60, 300, 600, 3600)] == [10.0, 10.0, 30.0, 60.0, 60.0]


def test_a_worker_is_recycled_between_cases_and_no_case_is_lost():
    """Note [Workers are recycled]: a worker's memory grows with every compiled case (380 MB to 945 MB over a
    one-hour soak), so after `recycle_after` cases an idle worker is replaced; every case still reports."""
    from dynfuzz.campaign.workers import Pool
    from dynfuzz.generators import case_seed, draw_case
    from dynfuzz.run.compilers import CompileSpec

    pool = Pool(1, CompileSpec(), timeout=120.0, recycle_after=3)
    try:
        pids, results = [], []
        for i in range(7):
            slot = pool.idle()[0]
            pids.append(slot.process.pid)
            pool.submit(slot, draw_case(case_seed(5, i), ("basic",)), {})
            while not (done := pool.collect(max_wait=5.0)):
                pass
            results += [status for _, _, status, _ in done]
    finally:
        pool.close()
    assert results == ["done"] * 7
    assert pool.recycled == 2
    assert len(set(pids)) == 3 and pids[:3] == [pids[0]] * 3 and pids[3:6] == [pids[3]] * 3


@pytest.mark.slow
def test_a_program_that_prints_never_reaches_the_campaign_terminal(tmp_path, capfd):
    """The triage worker re-runs programs while minimizing; their prints (a syntax-family `print(...)`) went
    to the campaign's stdout. They belong in OUT/workers/, like the case workers' output."""
    printing = _OK.replace("    return x.sin() + 1", "    print('PRINTED-BY-THE-PROGRAM')\n    return x.sin() + 1")
    summary, out = _campaign(tmp_path, [printing], workers=1, compiler="perturb-output", minimize_budget=10.0,
                             triage_grace=120.0)
    captured = capfd.readouterr()
    assert summary["findings"] >= 1
    assert "PRINTED-BY-THE-PROGRAM" not in captured.out + captured.err
    logs = {p.name: p.read_text() for p in (out / "workers").glob("*.log")}
    assert "triage0.log" in logs and "PRINTED-BY-THE-PROGRAM" in logs["triage0.log"]


def test_a_run_that_leaves_grad_mode_off_does_not_leak_into_the_next_one():
    """A worker runs thousands of cases in one process: grad mode or the default dtype left changed by one
    program (or by a torch bug) must not change how the next program runs."""
    import torch
    from dynfuzz.run.execute import observe

    leaky = textwrap.dedent("""
        import torch
        def f(x):
            torch.set_grad_enabled(False)
            torch.set_default_dtype(torch.float64)
            return x + 1
        def inputs(device, call=0):
            return (torch.linspace(-1, 1, 4, device=device),)
    """)
    observe(leaky, "f", "cpu", None, "eager")
    assert torch.is_grad_enabled() and torch.get_default_dtype() == torch.float32


def test_a_torch_function_mode_left_active_does_not_intercept_the_next_case():
    """A mode entered and never exited intercepted every later case of its worker in a one-hour soak (40
    findings that did not reproduce); the run pops it, and says how many it popped."""
    import torch
    from dynfuzz.run.execute import observe

    leaky = textwrap.dedent("""
        import torch
        class Mode(torch.overrides.TorchFunctionMode):
            def __torch_function__(self, func, types, args=(), kwargs=None):
                return func(*args, **(kwargs or {}))
        def f(x):
            Mode().__enter__()
            return x + 1
        def inputs(device, call=0):
            return (torch.linspace(-1, 1, 4, device=device),)
    """)
    depth = torch._C._len_torch_function_stack()
    obs = observe(leaky, "f", "cpu", None, "eager")
    assert torch._C._len_torch_function_stack() == depth
    assert obs.extra["leaked_function_modes"] == 2  # entered once per call of the plan


def test_a_torch_func_level_left_active_does_not_wrap_the_next_cases_tensors():
    """An export raising inside a torch.func transform left its level active: every later case of that
    worker made functorch `TensorWrapper`s and failed to snapshot (310 harness errors in a 1,000-case guided
    bench). The run undoes the levels a case left, whatever became of the case."""
    import torch
    from dynfuzz.run.execute import observe

    leaky = textwrap.dedent("""
        import torch
        def f(x):
            torch._C._functorch._grad_increment_nesting()
            return x + 1
        def inputs(device, call=0):
            return (torch.linspace(-1, 1, 4, device=device),)
    """)
    depth = torch._C._functorch.get_dynamic_layer_stack_depth()
    obs = observe(leaky, "f", "cpu", None, "eager")
    assert obs.extra["leaked_functorch_levels"] == 2  # one per call of the plan
    assert torch._C._functorch.get_dynamic_layer_stack_depth() == depth
    assert torch.ones(1).untyped_storage().nbytes() == 4  # the next case's tensors are plain again


def test_an_exported_jacfwd_that_raises_does_not_break_the_next_cases_jacfwd():
    """The graph of a strictly exported `torch.func.jacfwd` raises inside its transform (a torch bug,
    corpus/export_jacfwd_run_leaks_forward_ad.py) and leaves a functorch level and a forward-AD level
    active: every later jacfwd of that worker failed. The run restores both."""
    import torch
    from dynfuzz.run.compilers import CompileSpec, make_compiler
    from dynfuzz.run.execute import observe

    program = textwrap.dedent("""
        import torch
        def f(x):
            return torch.func.jacfwd(torch.sin)(x)
        def inputs(device, call=0):
            return (torch.linspace(-1, 1, 4, device=device),)
        CALLS = 1
        COMPILE_OPTIONS = {"export": "strict"}
    """)
    observe(program, "f", "cpu", make_compiler(CompileSpec()), "compiled")
    assert torch._C._functorch.get_dynamic_layer_stack_depth() == 0
    eager = observe(program, "f", "cpu", None, "eager")
    assert eager.calls[0].error is None, eager.calls[0].error


def test_a_module_that_compiled_the_previous_program_does_not_hand_it_to_the_next():
    """Dynamo leaves an `__import_<program module>` alias in the globals of any torch module whose frame it
    traced while importing the program: `torch.func.grad` (torch._functorch.apis), eager flex_attention, the
    higher-order ops. The next program is a new module under the same name, and the stale alias made
    `import_source` assert (a harness state leak filed as a torch crash in a 1,000-case bench)."""
    from dynfuzz.run.compilers import CompileSpec, make_compiler
    from dynfuzz.run.execute import observe

    program = textwrap.dedent("""
        import torch
        class Ctx:
            def __init__(self):
                self.log = []
            def __enter__(self):
                self.log.append(1)
                return self
            def __exit__(self, *exc):
                self.log.append(2)
                return False
        def f(x):
            cm = Ctx()
            with cm:
                y = x * 2
                torch._dynamo.graph_break()
            gv = torch.func.grad_and_value(lambda u: torch.cos(u).sum() * 0.5)(torch.tanh(y))
            return gv[0] + gv[1] + len(cm.log)
        def inputs(device, call=0):
            return (torch.linspace(-1, 1, 4, device=device),)
        CALLS = 1
    """)
    compiler = make_compiler(CompileSpec())
    for _ in range(2):
        obs = observe(program, "f", "cpu", compiler, "compiled")
        assert obs.calls[0].error is None, obs.calls[0].error


def test_the_faster_stack_capture_returns_dynamos_stack_frame_for_frame():
    """torch_compat.cache_stack_positions swaps Dynamo's graph-break stack capture for one that caches column
    tables; it must return the same frames with the same positions (the caller's own line aside). Compared with
    the original torch_compat kept before its first swap, so the test runs in a process already patched."""
    from dynfuzz.run import torch_compat

    torch_compat.cache_stack_positions()  # patched, as in every compiler process (xdist workers included)
    original = torch_compat.original("cache-stack-positions")
    if original is None:
        pytest.skip("torch 2.5.1 and older have no torch._dynamo.exc._extract_stack_with_positions to replace")
    assert original is not torch_compat.stack_with_positions

    def frames(stack):
        return [(f.filename, f.lineno, f.name, getattr(f, "colno", None), getattr(f, "end_colno", None))
                for f in stack]

    def capture(fn):
        return fn()

    # one call site for all three, so that every frame, the test's own included, is at the same position
    theirs, ours, again = [capture(fn) for fn in (original, torch_compat.stack_with_positions,
                                                  torch_compat.stack_with_positions)]  # again: from the cache
    assert frames(ours)[:-1] == frames(theirs)[:-1] == frames(again)[:-1] and len(ours) > 5
    assert frames(ours)[-1][:3] == frames(theirs)[-1][:3]


def test_guard_latency_timing_is_off_and_dynamo_still_guards():
    """skip_guard_latency_profiling only drops a log metric: a compiled function still recompiles when a
    guard fails and reuses its code when guards pass."""
    import torch
    import torch._dynamo.guards as guards
    import torch._dynamo.testing
    from dynfuzz.run import torch_compat

    if torch_compat.original("skip-guard-latency-profiling") is None:
        pytest.skip("torch 2.5.1 and older have no torch._dynamo.guards.profile_guard_manager to skip")
    torch_compat.skip_guard_latency_profiling()
    assert guards.profile_guard_manager is torch_compat._no_guard_latency
    torch._dynamo.reset()
    counter = torch._dynamo.testing.CompileCounter()
    fn = torch.compile(lambda x, n: x * n, backend=counter)
    results = [fn(torch.ones(2), n).tolist() for n in (2, 2, 3)]
    assert results == [[2.0, 2.0], [2.0, 2.0], [3.0, 3.0]] and counter.frame_count == 2


def test_an_error_on_graph_break_setting_left_on_does_not_make_the_next_cases_breaks_errors():
    """A `with torch._dynamo.error_on_graph_break(True)` block Dynamo leaves without restoring the setting
    (as the `error-on-graph-break-kept` mutant does) would turn every later graph break of the worker into
    an error; the setting is put back after each run, and the leak is recorded."""
    from dynfuzz.run import torch_compat
    from dynfuzz.run.execute import observe

    if torch_compat.error_on_graph_break() is None:
        pytest.skip(f"torch {torch_compat.torch_release()} has no error_on_graph_break setting")
    leaky = textwrap.dedent("""
        import torch
        def f(x):
            torch._dynamo.utils._set_error_on_graph_break(True)
            return x + 1
        def inputs(device, call=0):
            return (torch.linspace(-1, 1, 4, device=device),)
    """)
    obs = observe(leaky, "f", "cpu", None, "eager")
    assert torch_compat.error_on_graph_break() is False and obs.extra["leaked_error_on_graph_break"]
