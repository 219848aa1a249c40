"""Shared fixtures: compile specs, a judge helper that runs a program text, torch log quieting."""
from __future__ import annotations

import atexit
import builtins
import os
import shutil
import tempfile
import textwrap

import pytest
import torch
from dynfuzz.generators.case import Case
from dynfuzz.run.compilers import CompileSpec, make_compiler, quiet_torch_logs
from dynfuzz.run.judge import judge
from hypothesis import settings

quiet_torch_logs()

# Test hygiene: no test reads or writes the repository's own .hypothesis/ database. @given tests use no
# database, and every campaign a test starts (in-process or through the CLI, which inherits the environment)
# defaults to a throw-away example database instead of .hypothesis/examples.
settings.register_profile("dynfuzz-tests", database=None)
settings.load_profile("dynfuzz-tests")
if "DYNFUZZ_DB" not in os.environ:
    os.environ["DYNFUZZ_DB"] = tempfile.mkdtemp(prefix="dynfuzz-test-db-")
    atexit.register(shutil.rmtree, os.environ["DYNFUZZ_DB"], ignore_errors=True)  # the process that made it


def run_source(source: str, compiler: str = "torch", backend: str = "eager", fullgraph: bool = False,
               entry: str = "f", **case_kw):
    """Judge a hand-written program (dedented) and return the CaseResult."""
    case = Case(source=textwrap.dedent(source), entry=entry, **case_kw)
    spec = CompileSpec(compiler=compiler, backend=backend, fullgraph=fullgraph)
    return judge(case, make_compiler(spec), spec)


@pytest.fixture
def judge_source():
    return run_source


def judged(summary: dict, needed: int = 1) -> int:
    """The cases of a campaign that were judged: a case asking for a Dynamo setting this torch lacks (the basic
    family draws some that torch 2.5.1 has not) is skipped before any compiler runs. Fewer than `needed` skips the
    test, naming the settings."""
    count = summary["cases"] - sum(summary.get("skipped", {}).values())
    if count < needed:
        pytest.skip(f"torch {torch.__version__}: {', '.join(summary['skipped'])} (the campaign's cases need it)")
    return count


@pytest.fixture(scope="session")
def trial(tmp_path_factory):
    """`trial(mutants, family, cases, seed=0, disable=())`: a mutant trial campaign (dynfuzz.mutants.trials), run
    once per test session and shared by every test that asks for the same one, whichever xdist worker runs it
    (the first to ask runs it under a file lock in the session's shared temporary folder; the others read it).
    A trial that failed is not kept: the next test to ask runs it again and fails on its own. A mutant this torch
    release cannot take (its target is missing) skips the test, naming the missing target."""
    import hashlib
    import json

    from dynfuzz.mutants.trials import MutantUnavailable, Trial, run_trial
    from filelock import FileLock

    base = tmp_path_factory.getbasetemp()
    root = (base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base) / "mutant-trials"
    root.mkdir(parents=True, exist_ok=True)
    seen: dict[str, Trial] = {}
    unavailable: dict[str, str] = {}

    def get(mutants, family: str, cases: int, seed: int = 0, disable=()) -> Trial:
        mutants = tuple(sorted([mutants] if isinstance(mutants, str) else mutants))
        names = ",".join([disable] if isinstance(disable, str) else disable).split(",")
        disable = ",".join(sorted(n for n in names if n))
        key = json.dumps([mutants, family, cases, seed, disable])
        if key in seen:
            return seen[key]
        if key in unavailable:
            pytest.skip(unavailable[key])
        folder = root / f"{family}-{seed}-{cases}-{hashlib.sha256(key.encode()).hexdigest()[:10]}"
        with FileLock(f"{folder}.lock"):
            record = folder / "trial.json"
            if record.exists():
                seen[key] = Trial(folder, mutants, json.loads((folder / "summary.json").read_text()),
                                  json.loads(record.read_text())["seconds"])
                return seen[key]
            shutil.rmtree(folder, ignore_errors=True)
            try:
                seen[key] = run_trial(folder, mutants, family, cases, seed=seed, disable=disable)
            except MutantUnavailable as e:  # a target this torch release lacks: the trial proves nothing here
                unavailable[key] = str(e)
                pytest.skip(str(e))
            record.write_text(json.dumps({"key": key, "seconds": seen[key].seconds}))
            return seen[key]

    return get


def pytest_collection_modifyitems(config, items):
    for item in items:
        if "trial" in getattr(item, "fixturenames", ()):  # a mutant trial campaign: the `trials` job
            item.add_marker(pytest.mark.trials)
        for mark in item.iter_markers("requires"):
            missing = [p for p in mark.args if shutil.which(p) is None]
            if missing:
                item.add_marker(pytest.mark.skip(reason=f"needs {', '.join(missing)} on PATH, which is absent "
                                                        f"(apt-get install redis-server chromium; see README)"))
    if torch.cuda.is_available():
        return
    skip = pytest.mark.skip(reason="needs CUDA")
    for item in items:
        if "cuda" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(autouse=True)
def _own_working_directory(tmp_path_factory, monkeypatch):
    """Every test runs in a working directory of its own, never the repository root: a user's own campaign leaves
    `dynfuzz-out/` there (README's first command does), and a CLI test using the default `--out` must not meet it.
    Tests that need a repository file name it by absolute path."""
    monkeypatch.chdir(tmp_path_factory.mktemp("cwd"))


@pytest.fixture(autouse=True)
def _process_state_is_restored():
    """Programs run in-process may set torch._dynamo.config at module level (a corpus entry sets
    capture_scalar_outputs), and a local Ray cluster swaps `print` for its own: no test may leave either to
    the next one in the same worker (Dynamo traces `print` as a graph break only while it is the builtin)."""
    from dynfuzz.triage.corpus_replay import restore_dynamo_config

    saved = torch._dynamo.config.get_config_copy()
    saved_print = builtins.print  # ray.init() replaces print in its driver process (log deduplication)
    grad, dtype = torch.is_grad_enabled(), torch.get_default_dtype()  # a program run directly may change them
    yield
    restore_dynamo_config(saved)
    builtins.print = saved_print
    torch.set_grad_enabled(grad)
    torch.set_default_dtype(dtype)
