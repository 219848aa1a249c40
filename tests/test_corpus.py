"""The corpus: seed scenarios with metadata, replay verdicts, and the pytest plugin."""
from __future__ import annotations

import os
import runpy
import subprocess
import sys
from pathlib import Path

import pytest
from dynfuzz.cli import main
from dynfuzz.paths import corpus_dir
from dynfuzz.pytest_plugin import on_this_release
from dynfuzz.triage.corpus_replay import discover, format_table, recorded_elsewhere, replay, run_entry, verdict_for
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
    from dynfuzz.triage.known import repros_of

    known = KnownIssues.load()
    for sig, entry in known.entries.items():
        assert "upstream" in entry, sig
        for repro in repros_of(entry):
            assert known.entry_path(repro).exists(), repro


@pytest.mark.parametrize("expected,signature,found,verdict", [
    ("passing", None, [], "ok"),
    ("passing", None, ["abc"], "NEW"),
    ("known", "abc", ["abc", "def"], "still failing"),
    ("known", "abc", [], "FIXED"),
    ("open", "abc", ["def"], "CHANGED"),
])
def test_verdicts(expected, signature, found, verdict):
    assert verdict_for(expected, signature, found) == verdict


def _entry(tmp: Path, name: str, *, status: str, compiler: str = "torch", signature: str | None = None,
           torch: str | None = None) -> Path:
    program = "import torch\ncount = 0\ndef f(x):\n    global count\n    count += 1\n    return x * 2\n" \
              "def inputs(device, call=0):\n    return (torch.arange(3.0),)\n"
    meta = {"oracle": "all", "kind": "test", "signature": signature, "title": name, "tags": [],
            "torch": torch or torch_version(), "backend": "eager", "device": "cpu", "fullgraph": False,
            "compiler": compiler,
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


def test_an_isolated_entry_runs_in_a_clean_process_and_its_death_or_hang_is_a_harness_error(tmp_path, monkeypatch):
    """The plugin's runner (`run_entry_isolated`): a process forked from a torch-preloaded server, so this
    process's state (here a broken `run_entry`) never reaches it; an entry that kills its process or hangs is a
    harness error with the exit status or the timeout, never a verdict on torch."""
    from dynfuzz.triage import corpus_replay

    ok = _entry(tmp_path, "fine", status="passing")
    monkeypatch.setattr(corpus_replay, "run_entry", lambda *a: (_ for _ in ()).throw(RuntimeError("parent state")))
    assert corpus_replay.run_entry_isolated(str(ok)).verdict == "ok"
    aborting = _entry(tmp_path, "aborts", status="passing")
    aborting.write_text(aborting.read_text().replace("    return x * 2", "    import os; os.abort()"))
    dead = corpus_replay.run_entry_isolated(str(aborting))
    assert dead.verdict == "ERROR" and dead.detail.startswith("exit -6"), dead.detail
    hanging = _entry(tmp_path, "hangs", status="passing")
    hanging.write_text(hanging.read_text().replace("    return x * 2", "    import time; time.sleep(600)"))
    stuck = corpus_replay.run_entry_isolated(str(hanging), timeout=8)
    assert stuck.verdict == "ERROR" and stuck.detail == "ran past 8 s", stuck.detail


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


def test_replay_keeps_torchs_log_lines_off_its_table(tmp_path):
    """torch logs recoverable errors itself (`E1125 ... torch/_guards.py] ...`); replay captures them per entry,
    as a campaign does per case, instead of letting them land between the table's rows."""
    program = ("import logging\nimport torch\ndef f(x):\n    return x * 2\ndef inputs(device, call=0):\n"
               "    logging.getLogger('torch._guards').error('torch logged this line itself')\n"
               "    return (torch.arange(3.0),)\n")
    meta = {"oracle": "all", "kind": "test", "signature": None, "title": "logs", "tags": [], "torch": torch_version(),
            "backend": "eager", "device": "cpu", "fullgraph": False, "compiler": "torch", "entry": "f", "seed": None,
            "families": [], "status": "passing", "upstream": None}
    path = tmp_path / "corpus" / "logs.py"
    path.parent.mkdir(parents=True)
    path.write_text(render_entry(meta, program))
    done = subprocess.run([sys.executable, "-m", "dynfuzz", "replay", str(path), "--workers", "0"],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0 and "logs" in done.stdout, done.stderr[-2000:]
    assert "torch logged this line itself" not in done.stdout + done.stderr
    assert "torch logged this line itself" in run_entry(str(path)).torch_log


def test_one_seed_entry_replays_clean():
    path = corpus_dir() / "global_rebind_and_dict.py"
    outcome = run_entry(str(path))
    recorded = recorded_elsewhere(read_program(path).meta)
    if outcome.verdict != "ok" and recorded is not None:  # Note [The corpus on another torch release]
        pytest.skip(f"recorded on torch {recorded}; torch {torch_version()} diverges here: {outcome.detail}")
    assert outcome.verdict == "ok", outcome.detail


def test_an_entry_recorded_on_another_release_that_behaves_otherwise_is_skipped_naming_both(tmp_path):
    """Note [The corpus on another torch release]: the same divergence fails an entry recorded on this release
    and skips one recorded on another, with both releases and what was observed in the reason."""
    _entry(tmp_path, "elsewhere", status="passing", compiler="perturb-output", torch="2.4.0")
    _entry(tmp_path, "here", status="passing", compiler="perturb-output")
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    p = subprocess.run([sys.executable, "-m", "pytest", str(tmp_path / "corpus"), "-p", "no:dynfuzz",
                        "-p", "dynfuzz.pytest_plugin", "-q", "-rA", "-p", "no:cacheprovider"],
                       capture_output=True, text=True, cwd=tmp_path, env=env, timeout=300)
    assert p.returncode == 1 and "1 failed" in p.stdout and "1 skipped" in p.stdout, p.stdout
    assert f"recorded on torch 2.4.0; torch {torch_version()} behaves otherwise here (NEW" in p.stdout, p.stdout


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
            runpy.run_path(str(path), run_name="__main__")  # a file on disk, as `python ENTRY.py` runs it
    except AssertionError:
        return 1
    except Exception:
        recorded = recorded_elsewhere(read_program(path).meta)
        if recorded is None:
            raise  # the script itself broke: never a verdict
        pytest.skip(f"recorded on torch {recorded}; on torch {torch_version()} the script raises instead of checking")
    finally:  # an entry's bug may leave torch.func levels active (export_jacfwd_run_leaks_forward_ad.py)
        pop_functorch_levels(depth)
        exit_forward_ad_level()
    return 0


@pytest.mark.parametrize("path", discover(None), ids=lambda p: p.stem)
def test_corpus_entry_is_a_short_repro_whose_verdict_matches_its_status(path):
    """No pasted checker: the program, the compile call, the oracle's own check; exit 1 while a known or open
    bug is present, 0 for a passing scenario (and illegal programs a correct compiler refuses)."""
    text = path.read_text()
    head = text.split("\nPROGRAM = ")[0] if "\nPROGRAM = " in text else text.split('if __name__ == "__main__":')[-1]
    imports = {line.split()[1].split(".")[0] for line in head.splitlines()
               if line.strip().startswith(("import ", "from "))}
    # sys, types, importlib, runpy: eager's fresh copy of the program; copy: an exported program's example
    # arguments; linecache: an entry of the earlier layout registers its program's source under its module's name
    assert imports <= {"torch", "sys", "types", "copy", "importlib", "runpy", "linecache"}, imports
    assert "def describe(" not in text and "first_difference" not in text
    meta = read_program(path).meta
    if "DYNFUZZ_MUTANTS" in os.environ:
        pytest.skip("a mutant changes what the entries show")
    here = on_this_release(meta, path, KnownIssues.load()) if meta["status"] != "passing" else None
    verdict = _script_verdict(path)
    expected = 0 if meta["status"] == "passing" or here == "fixed" else 1
    recorded = recorded_elsewhere(meta)
    if verdict != expected and here != "fixed" and recorded is not None:  # Note [The corpus on another torch release]
        pytest.skip(f"recorded on torch {recorded} as {meta['status']}; the script exits {verdict} on torch "
                    f"{torch_version()}")
    assert verdict == expected
