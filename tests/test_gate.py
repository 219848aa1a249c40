"""The PR gate: deterministic programs, exit codes, JUnit XML and the Markdown summary."""
from __future__ import annotations

import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

from dynfuzz.cli import main
from dynfuzz.gate import gate_programs, programs_digest

ROOT = Path(__file__).resolve().parent.parent
ENTRY = str(ROOT / "corpus" / "global_rebind_and_dict.py")


def test_same_seed_gives_byte_identical_programs_across_processes():
    here = programs_digest(0, 25)
    code = "from dynfuzz.gate import programs_digest; print(programs_digest(0, 25))"
    env = dict(os.environ, PYTHONPATH=str(ROOT), PYTHONHASHSEED="12345")
    there = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=ROOT,
                           timeout=300).stdout.strip()
    assert here == there
    assert programs_digest(1, 25) != here
    assert gate_programs(0, 3) == gate_programs(0, 3)


def test_gate_reports_a_new_divergence(tmp_path, capsys):
    junit, summary = tmp_path / "junit.xml", tmp_path / "summary.md"
    rc = main(["gate", "--budget", "60s", "--cases", "4", "--compiler", "perturb-output", "--workers", "0",
               "--corpus", ENTRY, "--out", str(tmp_path / "out"), "--junit", str(junit), "--summary", str(summary)])
    assert rc == 1
    out = capsys.readouterr().out
    assert "NEW " in out and "gate: FAIL" in out
    assert list((tmp_path / "out" / "new").glob("*.min.py")), "the first new finding is minimized and saved"
    suite = ET.parse(junit).getroot()
    assert suite.get("failures") == "1" and int(suite.get("tests")) == 2
    assert suite.find("testcase[@classname='dynfuzz.generated']/failure") is not None
    text = summary.read_text()
    assert "new divergence" in text and "| signature |" in text


def test_gate_passes_with_a_correct_compiler(tmp_path, capsys):
    junit = tmp_path / "junit.xml"
    rc = main(["gate", "--budget", "60s", "--cases", "3", "--compiler", "identity", "--workers", "0",
               "--corpus", ENTRY, "--out", str(tmp_path / "out"), "--junit", str(junit)])
    assert rc == 0, capsys.readouterr().out
    assert ET.parse(junit).getroot().get("failures") == "0"


def test_gate_usage_errors(tmp_path):
    out = str(tmp_path / "out")
    assert main(["gate", "--cases", "-1", "--out", out]) == 2
    assert main(["gate", "--budget", "soon", "--out", out]) == 2
    assert main(["gate", "--corpus", str(tmp_path / "missing"), "--out", out]) == 2
    assert main(["gate", "--backend", "nope", "--out", out]) == 2
