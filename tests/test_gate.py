"""The PR gate: deterministic programs, exit codes, JUnit XML and the Markdown summary."""
from __future__ import annotations

import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
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


@pytest.mark.slow
def test_gate_reports_a_new_bucket_with_its_repro(tmp_path, capfd):
    junit, summary = tmp_path / "junit.xml", tmp_path / "summary.md"
    rc = main(["gate", "--budget", "30s", "--cases", "2", "--compiler", "perturb-output", "--workers", "1",
               "--no-minimize", "--corpus", ENTRY, "--out", str(tmp_path / "out"), "--junit", str(junit),
               "--summary", str(summary)])
    assert rc == 1
    out = capfd.readouterr().out
    assert "NEW " in out and "gate: FAIL" in out and ("outputs/wrong-value: " in out or "miscompile: " in out)
    assert "---- repro " in out and "torch.compile" in out, "the first new bucket's repro is printed inline"
    buckets = [p for p in (tmp_path / "out" / "campaign" / "findings").iterdir() if p.is_dir()]
    assert buckets and all((b / "repro.py").is_file() and (b / "report.md").is_file() for b in buckets)
    suite = ET.parse(junit).getroot()
    bucket_cases = suite.findall("testcase")
    per_bucket = [c for c in bucket_cases if c.get("classname", "").startswith("dynfuzz.bucket.")]
    assert len(per_bucket) == len(buckets), "one JUnit testcase per bucket"
    assert all(c.find("failure") is not None for c in per_bucket)
    assert suite.find("testcase[@classname='dynfuzz.generated']/failure") is not None
    text = summary.read_text()
    assert "new bug" in text and "| bucket | id |" in text and "```python" in text


def test_gate_internal_error_is_exit_3_and_never_a_divergence(tmp_path, capsys, monkeypatch):
    from dynfuzz.campaign.campaign import Campaign

    def broken(self):
        raise RuntimeError("simulated dynfuzz bug")

    monkeypatch.setattr(Campaign, "run", broken)
    junit, summary = tmp_path / "junit.xml", tmp_path / "summary.md"
    rc = main(["gate", "--cases", "2", "--compiler", "identity", "--workers", "0", "--corpus", ENTRY,
               "--out", str(tmp_path / "out"), "--junit", str(junit), "--summary", str(summary)])
    assert rc == 3
    out = capsys.readouterr().out
    assert "INTERNAL dynfuzz internal error: RuntimeError: simulated dynfuzz bug" in out and "NEW " not in out
    suite = ET.parse(junit).getroot()
    assert suite.get("errors") == "1" and suite.get("failures") == "0"
    assert "internal error" in summary.read_text()


def test_the_gate_campaign_matches_known_issues_by_the_file_alone(tmp_path, monkeypatch):
    """A campaign matches known issues by bucket key; the corpus's open and known signatures once added to the
    gate's known issues were read by nothing, so the campaign gets the known-issues file as it is."""
    from dynfuzz import gate
    from dynfuzz.campaign.campaign import Campaign
    from dynfuzz.triage.corpus_replay import Outcome
    from dynfuzz.triage.known import KnownIssues

    seen = {}

    def capture(self):
        seen["known"] = self.config.known
        return {"cases": 0, "buckets": []}

    monkeypatch.setattr(Campaign, "run", capture)
    monkeypatch.setattr(gate, "replay", lambda files, workers, known: [
        Outcome(ENTRY, "open", "open", "still failing", "outputs-miscompile-deadbeef")])
    assert main(["gate", "--cases", "1", "--compiler", "identity", "--workers", "0", "--corpus", ENTRY,
                 "--out", str(tmp_path / "out")]) == 0
    file = KnownIssues.load(None)
    assert seen["known"].entries == file.entries and seen["known"].issues == file.issues


def test_gate_exit_code_new_bucket_wins_over_internal_error():
    from dynfuzz.gate import GateResult

    new = [{"id": "0" * 12, "key": "outputs/wrong-value: tensor ops"}]
    assert GateResult([], {}, new, [], 1.0, ["dynfuzz internal error: x"]).exit_code == 1
    assert GateResult([], {}, [], [], 1.0, ["dynfuzz internal error: x"]).exit_code == 3
    assert GateResult([], {}, [], [], 1.0, []).exit_code == 0


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


@pytest.mark.parametrize("strict", [False, True])
def test_a_new_refusal_fails_the_gate_only_with_strict(tmp_path, capsys, monkeypatch, strict):
    """A clean graph break under fullgraph is a feature gap: listed, but the gate fails on it only when asked."""
    from dynfuzz.campaign.campaign import Campaign

    refusal = {"id": "0" * 12, "key": "refusal: heapq.heapify on list under fullgraph=True raising Unsupported",
               "class": "refused", "tier": "refusal", "status": "ok", "count": 1, "folder": str(tmp_path),
               "repro": None, "cause": "refused"}
    monkeypatch.setattr(Campaign, "run", lambda self: {"cases": 2, "buckets": [refusal], "harness_errors": {}})
    args = ["gate", "--cases", "2", "--compiler", "identity", "--workers", "0", "--corpus", ENTRY,
            "--out", str(tmp_path / "out")]
    assert main([*args, *(["--strict"] if strict else [])]) == (1 if strict else 0)
