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


def pytest_collection_modifyitems(config, items):
    for item in items:
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
