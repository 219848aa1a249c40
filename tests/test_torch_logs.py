"""The `torch-logs` setting (issue 14: reach more of torch/_dynamo): a share of programs is compiled with
torch's logs on, which runs the formatting of graphs, guards, bytecode and traced values that a silent
compile never does; and the two guard-shortcut config flags drawn alongside the others.

Checked here: the setting's share of the default mix, logs on during the compiled call only and their
text never printed, torch's log levels restored after, a clean program judged clean, the repro switching
the same logs on, and (slow) a short campaign finding the mutant that only a logged compile exposes,
which survives with the setting off.
"""
from __future__ import annotations

import logging
import subprocess
import sys
import textwrap
from collections import Counter

import pytest
from dynfuzz.generators import case_seed, draw_case
from dynfuzz.generators.case import Case
from dynfuzz.mutants import load
from dynfuzz.run.compilers import quiet_torch_logs
from dynfuzz.run.torch_logs import TORCH_LOGS, torch_log_settings, with_torch_logs

PROGRAM = textwrap.dedent("""
    import torch
    G = {"k": 1}
    def f(x):
        G["k"] = G["k"] + 1
        y = x * G["k"]
        torch._dynamo.graph_break()
        return y.sin() + len(G)
    def inputs(device, call=0):
        return (torch.linspace(-1.0, 1.0, 4 + call, device=device),)
    CALLS = 3
    COMPILE_OPTIONS = {"logs": True}
""")
MUTANT, CONSTRUCT, CASES = "graph-log-negates-output", "torch-logs", 40


def test_the_setting_has_its_share_of_the_default_mix():
    cases = [draw_case(case_seed(45, i)) for i in range(600)]
    counts = Counter(t for c in cases for t in c.tags)
    assert counts["torch-logs"] >= 0.02 * len(cases)
    assert counts["config-recursive-dict-tags"] and counts["config-cpp-symbolic-guards"]
    logged = [c for c in cases if "torch-logs" in c.tags]
    assert all("COMPILE_OPTIONS = {'logs': True" in c.source or "'logs': True" in c.source for c in logged)


def test_logs_are_on_during_the_call_only_and_torchs_levels_come_back():
    dynamo = logging.getLogger("torch._dynamo")
    quiet_torch_logs()
    seen = []

    def call():
        seen.append(dynamo.getEffectiveLevel())
        return 1

    with_torch_logs(call, quiet_torch_logs)()
    assert seen == [logging.DEBUG]
    assert dynamo.level == logging.CRITICAL  # the campaign's quiet level, re-applied afterwards


def test_settings_this_torch_lacks_are_left_out(monkeypatch):
    import torch._logging

    def set_logs(*, dynamo=None, guards=False):
        return None

    monkeypatch.setattr(torch._logging, "set_logs", set_logs)
    assert torch_log_settings() == {"dynamo": TORCH_LOGS["dynamo"], "guards": True}


def test_a_logged_compile_is_judged_clean_and_prints_nothing(judge_source, capfd):
    result = judge_source(PROGRAM)
    assert result.findings == [] and not result.skipped
    out, err = capfd.readouterr()
    assert "TRACED GRAPH" not in out + err and "GUARDS" not in out + err


def test_a_torch_handler_over_a_closed_stream_breaks_no_case(judge_source, tmp_path):
    """torch makes its log handlers on first use, over whatever sys.stderr was then: in a test session, a
    test's captured stream, closed after it. Capturing a case's log once flushed that stream and raised
    "I/O operation on closed file" (every later corpus entry of the xdist worker became a harness error)."""
    import logging

    from dynfuzz.run.torch_logs import capture

    closed = (tmp_path / "stderr-of-an-earlier-test").open("w")
    handler = logging.StreamHandler(closed)
    logger = logging.getLogger("torch._dynamo.dynfuzz_test_closed")
    logger.addHandler(handler)
    closed.close()
    try:
        with capture() as log:
            logger.warning("reaches the case's log")
        assert "reaches the case's log" in log.text
        assert not judge_source(PROGRAM).findings
    finally:
        logger.removeHandler(handler)


def test_the_repro_turns_the_same_logs_on(tmp_path):
    from dynfuzz.oracles.model import Finding
    from dynfuzz.run.compilers import CompileSpec
    from dynfuzz.triage.repro import metadata_for, render_repro

    case = Case(source=PROGRAM, entry="f", tags=frozenset({"torch-logs"}), seed=0)
    finding = Finding("outputs", "miscompile", "call 0: out[0] value differ", "0" * 12, call=0)
    spec = CompileSpec()
    text = render_repro(case, finding, spec, metadata_for(case, finding, spec))
    assert "torch._logging.set_logs(dynamo=10, graph_code=True" in text
    assert "logs=" not in text.split("torch.compile(")[1].split(")")[0]
    path = tmp_path / "repro.py"
    path.write_text(text)
    done = subprocess.run([sys.executable, str(path)], capture_output=True, text=True, timeout=300)
    # this made-up finding names no difference to assert, so the script ends "cannot express" (exit 2), but
    # only after running the program eagerly and compiled: with the logs really on
    assert done.returncode == 2, done.stdout + done.stderr[-3000:]
    assert "TRACED GRAPH" in done.stderr and "[__guards]" in done.stderr


def test_the_mutant_names_its_construct():
    assert load()[MUTANT].construct == CONSTRUCT


@pytest.mark.slow
def test_a_short_campaign_finds_the_mutant(trial):
    assert trial(MUTANT, "basic", CASES).finds(MUTANT, CONSTRUCT)


@pytest.mark.slow
def test_without_the_setting_the_mutant_survives(trial):
    assert not trial(MUTANT, "basic", CASES, disable=CONSTRUCT).finds(MUTANT)
