"""`.ci/run` follows README's quick start to the letter (the venv line, the first command, the test command, read
out of README.md, in README's order, in the clone) and fails a campaign that ended badly: an exit other than 0 or
1, dynfuzz's own internal or oracle errors, an internal-error bucket, no report."""
from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _ci(script: str, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", "-c", f"source {ROOT / '.ci' / 'run'}\n{script}"], cwd=cwd, capture_output=True,
                          text=True, timeout=120)


def test_the_steps_are_readmes_commands_in_readmes_order():
    readme = (ROOT / "README.md").read_text()
    done = _ci("readme_venv_command; readme_command 1; readme_command 2; readme_command 3; declare -f main")
    venv, campaign, tests, trials = done.stdout.splitlines()[:4]
    assert venv == "python3 -m venv .venv && . .venv/bin/activate" and f"`{venv}`" in readme
    assert "dynfuzz fuzz --budget 60s --out dynfuzz-out" in campaign and campaign in readme
    assert "python3 -m pytest -n 2 -q -m \"not trials\"" in tests and tests in readme
    assert trials == "python3 -m pytest -n 2 -q -m trials" and trials in readme
    assert readme.index(venv) < readme.index(campaign) < readme.index(tests) < readme.index(trials)
    body = done.stdout[done.stdout.index("main ()"):]
    assert body.index("make_readme_venv") < body.index("run_readme_campaign") < body.index("run_readme_tests") \
        < body.index("run_readme_trials") < body.index("run_release_tests")


def test_the_venv_is_readmes_own_in_the_clone_and_never_replaces_one_silently(tmp_path):
    clone = tmp_path / "clone"
    (clone / ".venv").mkdir(parents=True)  # a developer's own environment
    (clone / "README.md").write_text((ROOT / "README.md").read_text())
    refused = _ci("make_readme_venv", cwd=clone)
    assert refused.returncode != 0 and "--replace-venv" in refused.stderr and (clone / ".venv").is_dir()
    done = _ci("replace_venv=1; make_readme_venv && echo \"active: $VIRTUAL_ENV\"", cwd=clone)
    assert done.returncode == 0, done.stderr
    assert f"active: {clone / '.venv'}" in done.stdout and (clone / ".venv" / "bin" / "python3").exists()


def _summary(**changes) -> dict:
    summary = {"cases": 12, "unique": 0, "harness_errors": {"invalid-case": 1}, "buckets": [], "internal_errors": 0}
    summary.update(changes)
    return summary


@pytest.mark.parametrize("summary, report, ok", [
    (_summary(), True, True),
    (_summary(harness_errors={"internal": 1}), True, False),
    (_summary(harness_errors={"oracle": 2}), True, False),
    (_summary(buckets=[{"key": "harness/internal-error: x", "class": "internal-error"}], internal_errors=1), True,
     False),
    (_summary(cases=0), True, False),
    (_summary(), False, False),
])
def test_a_campaign_that_ended_badly_fails_ci(tmp_path, summary, report, ok):
    (tmp_path / "summary.json").write_text(json.dumps(summary))
    if report:
        (tmp_path / "report.html").write_text("<html></html>")
    assert (_ci(f"check_campaign {tmp_path}").returncode == 0) == ok


def test_readmes_campaign_runs_verbatim_in_the_clone_and_its_folder_stays_for_the_tests(tmp_path):
    """Step 2 runs README's first command in the clone's root with only its budget shortened (no scratch --out),
    so the test step after it meets the `dynfuzz-out/` a user's own first command leaves; an existing one is an
    error (README starts without it)."""
    clone = tmp_path / "clone"
    clone.mkdir()
    summary = json.dumps(_summary()).replace('"', '\\"')
    command = (f'mkdir dynfuzz-out && echo "{summary}" > dynfuzz-out/summary.json && echo x > dynfuzz-out/report.html'
               ' && echo ran --budget 60s --out dynfuzz-out')
    (clone / "README.md").write_text(f"# x\n\n## Quick start\n\n```\n{command}\n```\n\n## Next\n")
    done = _ci("run_readme_campaign", cwd=clone)
    assert done.returncode == 0, done.stderr
    assert "ran --budget 20s --out dynfuzz-out" in done.stdout
    assert (clone / "dynfuzz-out" / "summary.json").is_file()
    again = _ci("run_readme_campaign", cwd=clone)
    assert again.returncode != 0 and "dynfuzz-out already exists" in again.stderr
