"""The corpus: seed scenarios with metadata, replay verdicts, and the pytest plugin."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from dynfuzz.cli import main
from dynfuzz.paths import corpus_dir
from dynfuzz.pytest_plugin import on_this_release
from dynfuzz.triage.corpus_replay import discover, format_table, replay, run_entry, verdict_for
from dynfuzz.triage.known import KnownIssues
from dynfuzz.triage.repro import read_program, render_entry, torch_version

ROOT = Path(__file__).resolve().parent.parent
REQUIRED = ("oracle", "signature", "tags", "torch", "status", "upstream", "backend", "entry")
# every scenario of the seed documents, by the tag its corpus entry carries
SCENARIO_TAGS = ("shadowing", "preexisting-closure", "preexisting-function-creates-closure", "sourceless-closure",
                 "class-cell", "out=", "t_", "symint", "unbacked-symint", "input-mutation", "hook",
                 "list-subclass", "backend-switch")


def test_corpus_has_seed_scenarios_with_metadata():
    files = discover(None)
    assert len(files) >= 12
    known = KnownIssues.load()
    tags: set[str] = set()
    for path in files:
        meta = read_program(path).meta
        assert all(k in meta for k in REQUIRED), path
        assert meta["status"] in ("passing", "known", "open"), path
        if meta["status"] == "known":
            assert meta["signature"] in known, f"{path}: known entries need a known_issues.toml row"
        tags.update(meta["tags"])
    missing = [t for t in SCENARIO_TAGS if t not in tags]
    assert not missing, missing


def test_known_issue_signatures_point_at_corpus_files():
    known = KnownIssues.load()
    for sig, entry in known.entries.items():
        assert "upstream" in entry, sig
        if entry.get("corpus"):
            assert known.entry_path(entry["corpus"]).exists(), entry["corpus"]


@pytest.mark.parametrize("expected,signature,found,verdict", [
    ("passing", None, [], "ok"),
    ("passing", None, ["abc"], "NEW"),
    ("known", "abc", ["abc", "def"], "still failing"),
    ("known", "abc", [], "FIXED"),
    ("open", "abc", ["def"], "CHANGED"),
])
def test_verdicts(expected, signature, found, verdict):
    assert verdict_for(expected, signature, found) == verdict


def _entry(tmp: Path, name: str, *, status: str, compiler: str = "torch", signature: str | None = None) -> Path:
    program = "import torch\ncount = 0\ndef f(x):\n    global count\n    count += 1\n    return x * 2\n" \
              "def inputs(device, call=0):\n    return (torch.arange(3.0),)\n"
    meta = {"oracle": "all", "kind": "test", "signature": signature, "title": name, "tags": [],
            "torch": torch_version(), "backend": "eager", "device": "cpu", "fullgraph": False, "compiler": compiler,
            "entry": "f", "seed": None, "families": [], "status": status, "upstream": None}
    path = tmp / "corpus" / f"{name}.py"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(render_entry(meta, program))
    return path


def test_replay_flags_fixed_and_new(tmp_path):
    fixed = _entry(tmp_path, "was_known", status="known", signature="0123456789ab")
    new = _entry(tmp_path, "regressed", status="passing", compiler="perturb-output")
    ok = _entry(tmp_path, "fine", status="passing")
    outcomes = replay([fixed, new, ok], workers=0)
    assert [o.verdict for o in outcomes] == ["FIXED", "NEW", "ok"]
    table = format_table(outcomes)
    assert "FIXED: was_known" in table and "NEW: regressed" in table


def test_replay_cli_exit_codes(tmp_path, capsys):
    ok = _entry(tmp_path, "fine", status="passing")
    assert main(["replay", str(ok), "--workers", "0"]) == 0
    assert "fine" in capsys.readouterr().out
    assert main(["replay", str(_entry(tmp_path, "bad", status="passing", compiler="perturb-output")),
                 "--workers", "0"]) == 1
    assert main(["replay", str(tmp_path / "nope.py")]) == 2
    broken = tmp_path / "corpus" / "broken.py"
    broken.write_text("DYNFUZZ = {'status': 'passing'}\ndef f(:\n")
    assert run_entry(str(broken)).verdict == "ERROR"


def test_one_seed_entry_replays_clean():
    outcome = run_entry(str(corpus_dir() / "global_rebind_and_dict.py"))
    assert outcome.verdict == "ok", outcome.detail


@pytest.mark.slow
def test_pytest_plugin_xfails_known_and_fails_xpass(tmp_path):
    _entry(tmp_path, "fine", status="passing")
    _entry(tmp_path, "was_known", status="known", signature="0123456789ab")
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    # `-p no:dynfuzz` first: where the package is installed its pytest11 entry point already loads the
    # plugin under that name, and registering the same module twice is an error.
    p = subprocess.run([sys.executable, "-m", "pytest", str(tmp_path / "corpus"), "-p", "no:dynfuzz",
                        "-p", "dynfuzz.pytest_plugin",
                        "-q", "-rA", "-p", "no:cacheprovider", "-p", "no:randomly"],
                       capture_output=True, text=True, cwd=tmp_path, env=env, timeout=300)
    out = p.stdout
    assert p.returncode == 1, out
    assert "1 passed" in out and "1 failed" in out, out
    assert "XPASS(strict)" in out, out


def _script_verdict(path: Path) -> int:
    """`python ENTRY.py`'s exit status, run in this process: 1 when its check fails, 0 when it passes."""
    import warnings

    import torch
    from dynfuzz.run.torch_compat import exit_forward_ad_level, functorch_depth, pop_functorch_levels

    torch._dynamo.reset()
    depth = functorch_depth()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            exec(compile(path.read_text(), str(path), "exec"), {"__name__": "__main__"})
    except AssertionError:
        return 1
    finally:  # an entry's bug may leave torch.func levels active (export_jacfwd_run_leaks_forward_ad.py)
        pop_functorch_levels(depth)
        exit_forward_ad_level()
    return 0


@pytest.mark.parametrize("path", discover(None), ids=lambda p: p.stem)
def test_corpus_entry_is_a_short_repro_whose_verdict_matches_its_status(path):
    """No pasted checker: the program, the compile call, the oracle's own check; exit 1 while a known or open
    bug is present, 0 for a passing scenario (and illegal programs a correct compiler refuses)."""
    text = path.read_text()
    imports = {line.split()[1].split(".")[0] for line in text.split("\nPROGRAM = ")[0].splitlines()
               if line.startswith(("import ", "from "))}
    # sys, types: a cond program is an importable module; copy: an exported program's example arguments
    assert imports <= {"torch", "sys", "types", "copy"}, imports
    assert "def describe(" not in text and "first_difference" not in text
    meta = read_program(path).meta
    status = meta["status"]
    if "DYNFUZZ_MUTANTS" in os.environ:
        pytest.skip("a mutant changes what the entries show")
    here = on_this_release(meta, path, KnownIssues.load()) if status != "passing" else None
    verdict = _script_verdict(path)
    if here == "unlisted" and verdict == 0:  # docs/releases.md: what it does on this release is not recorded
        pytest.xfail("passes on this torch release, which its known-issues entry does not record")
    assert verdict == (0 if status == "passing" or here == "fixed" else 1)
