"""A campaign never dies of its own errors, and the review defects stay fixed.

Each test names the failure it guards against; the crash-kind tests run a real campaign with a worker
pool against a test double (or a crash program) and check the case is saved, counted, and the
campaign still ends within its budget plus a small grace.
"""
from __future__ import annotations

import json
import textwrap

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
    from dynfuzz.run.exampledb import FindingsDB
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
