"""The command line end to end: campaigns, saved findings, `check`, and one-line errors on bad input."""
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from dynfuzz.generators.case import Case
from dynfuzz.run.compilers import CompileSpec, make_compiler
from dynfuzz.run.judge import judge
from dynfuzz.triage.repro import read_program, write_finding

ROOT = Path(__file__).resolve().parent.parent
SUMMARY_FIELDS = {"torch", "backend", "device", "seconds", "cases", "cases_per_second", "findings", "unique",
                  "by_oracle", "features", "torch_seconds", "overhead_fraction"}


def dynfuzz(*args, timeout=300):
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.run([sys.executable, "-m", "dynfuzz", *args], capture_output=True, text=True,
                          timeout=timeout, cwd=os.getcwd(), env=env)


@pytest.mark.slow
def test_short_campaign_writes_a_valid_summary(tmp_path):
    r = dynfuzz("fuzz", "--cases", "8", "--budget", "5m", "--seed", "3", "--family", "basic", "--out",
                str(tmp_path), "--no-progress")
    assert r.returncode == 0, r.stderr
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert SUMMARY_FIELDS <= summary.keys()
    assert summary["cases"] > 0 and summary["backend"] == "eager" and summary["device"] == "cpu"
    assert 0 <= summary["overhead_fraction"] <= 1
    assert summary["features"] and all(isinstance(v, int) for v in summary["features"].values())
    assert summary["cases"] == 8 and summary["harness_errors"] == {}
    assert summary["unique"] == len(list((tmp_path / "findings").glob("*/examples/*.py")))


def test_broken_compiler_campaign_saves_findings_that_check_reproduces(tmp_path):
    # No triage: which findings meet in a bucket would depend on when triage returns (tests/test_filing.py covers
    # the merges deterministically, with a fake triage); filed under cheap keys, the outcome is the same each run.
    r = dynfuzz("fuzz", "--budget", "60s", "--cases", "6", "--compiler", "perturb-output", "--workers", "0",
                "--family", "basic", "--out", str(tmp_path), "--no-progress", "--no-minimize")
    assert r.returncode == 0, r.stderr
    summary = json.loads((tmp_path / "summary.json").read_text())
    saved = sorted((tmp_path / "findings").glob("*/examples/*.py"))
    files = [u["file"] for u in summary["unique_findings"]]
    assert summary["unique"] == len(files) >= 1 and len(set(files)) == len(files)
    assert sorted(tmp_path / f for f in files if f) == saved, "every identity's own program (paths relative to OUT)"
    assert summary["by_oracle"].get("outputs", 0) >= 1
    target = saved[0]
    again = dynfuzz("check", str(target), "--compiler", "perturb-output")
    assert again.returncode == 1
    assert target.stem.split("-")[0] in again.stdout
    clean = dynfuzz("check", str(target), "--compiler", "torch")
    assert clean.returncode == 0, clean.stdout


def test_saved_script_for_a_real_divergence_runs_standalone(tmp_path):
    source = textwrap.dedent("""
        import torch
        def f(x):
            return x + torch.tensor(x.tolist())
        def inputs(device, call=0):
            return (torch.ones(2, device=device),)
    """)
    case = Case(source=source)
    spec = CompileSpec(fullgraph=True)
    result = judge(case, make_compiler(spec), spec)
    assert [f.kind for f in result.findings] == ["unsupported"]
    path = write_finding(tmp_path, case, result.findings[0], spec)
    text = path.read_text()
    assert "import torch" in text and "from dynfuzz.oracles" not in text and "import harness" not in text
    run = subprocess.run([sys.executable, str(path)], capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert run.returncode == 1, run.stdout + run.stderr
    assert "AssertionError: compiled raised Unsupported" in run.stderr, run.stderr
    assert read_program(path).meta["signature"] == result.findings[0].signature


def test_saved_script_exits_zero_when_no_divergence(tmp_path):
    case = Case(source=textwrap.dedent("""
        import torch
        def f(x):
            return x.cos() + 1
        def inputs(device, call=0):
            return (torch.ones(2, device=device),)
    """))
    spec = CompileSpec(compiler="perturb-output")
    result = judge(case, make_compiler(spec), spec)
    path = write_finding(tmp_path, case, result.findings[0], spec)
    run = subprocess.run([sys.executable, str(path)], capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert run.returncode == 0, run.stdout + run.stderr


@pytest.mark.parametrize("args, needle", [
    (["fuzz", "--backend", "nope"], "unknown backend"),
    (["fuzz", "--device", "tpu"], "unknown device"),
    (["fuzz", "--budget", "-5s"], "negative"),
    (["fuzz", "--budget", "ten minutes"], "malformed"),
    (["fuzz", "--compiler", "nope"], "unknown compiler"),
    (["fuzz", "--family", "nope", "--budget", "1s"], "unknown family"),
    (["fuzz", "--out", "/proc/dynfuzz-cannot-write", "--budget", "1s"], "cannot write"),
    (["sample", "-n", "-1"], "must not be negative"),
])
def test_bad_input_is_one_line_and_exit_2(args, needle):
    r = dynfuzz(*args)
    assert r.returncode == 2
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and needle in lines[0] and "Traceback" not in r.stderr


def test_a_bad_flag_is_reported_before_the_folder(tmp_path):
    """A user whose default `--out` holds an earlier campaign (README's first command leaves `dynfuzz-out/`) and
    who mistyped a flag is told about the flag, not about `--resume`/`--overwrite`; and a refused start with a
    fresh `--out` leaves no folder behind."""
    earlier = Path("dynfuzz-out")
    earlier.mkdir()
    (earlier / "summary.json").write_text("{}")
    for args, needle in [(["--backend", "bogus"], "unknown backend"), (["--family", "nope"], "unknown family"),
                         (["--minimize-budget", "0s"], "must be positive")]:
        r = dynfuzz("fuzz", *args, "--budget", "1s")
        assert r.returncode == 2 and needle in r.stderr and "holds an earlier campaign" not in r.stderr, r.stderr
    known = tmp_path / "malformed.toml"
    known.write_text("[[issue]]\nkey = 3\n")
    for args in (["--backend", "bogus"], ["--known", str(known)]):
        fresh = tmp_path / "fresh"
        r = dynfuzz("fuzz", *args, "--budget", "1s", "--out", str(fresh))
        assert r.returncode == 2 and not fresh.exists(), (args, r.stderr)


def test_bad_files_are_one_line_and_exit_2(tmp_path):
    """A non-UTF-8 program, a known-issues file of the wrong structure (file and entry named), a --db that
    is a file: each one line on stderr, exit 2, never a traceback."""
    program = tmp_path / "latin1.py"
    program.write_bytes(b'x = "\xff\xfe"\n')
    known = tmp_path / "known.toml"
    known.write_text("[[issue]]\nkey = 3\n")
    db = tmp_path / "db-file"
    db.write_text("")
    cases = [
        (["check", str(program)], "not UTF-8"),
        (["fuzz", "--known", str(known), "--cases", "1", "--out", str(tmp_path / "o1")], "issue entry 1: `key`"),
        (["fuzz", "--db", str(db), "--cases", "1", "--out", str(tmp_path / "o2")], "is a file"),
        (["check"], "FILE.py or --case-seed"),
    ]
    known2 = tmp_path / "known2.toml"
    known2.write_text("issue = 3\n")
    cases.append((["fuzz", "--known", str(known2), "--cases", "1", "--out", str(tmp_path / "o3")], "known2.toml"))
    for args, needle in cases:
        r = dynfuzz(*args)
        lines = r.stderr.strip().splitlines()
        assert r.returncode == 2 and len(lines) == 1 and needle in lines[0], (args, r.stderr)


def test_case_seed_redraws_exactly_the_campaign_case():
    from dynfuzz.generators.case import case_seed, draw_case

    seed = case_seed(5, 3)
    r = dynfuzz("sample", "--case-seed", str(seed), "--family", "basic", "--json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)[0]["source"] == draw_case(seed, ("basic",)).source
    r = dynfuzz("check", "--case-seed", str(seed), "--family", "basic")
    assert r.returncode in (0, 1) and f"case seed {seed}" in r.stdout, r.stdout + r.stderr  # 1: torch diverged


def test_no_test_uses_the_repository_example_database():
    from hypothesis import settings

    assert settings.default.database is None
    assert not os.environ["DYNFUZZ_DB"].startswith(str(ROOT))
    from dynfuzz.cli import build_parser

    assert build_parser().parse_args(["fuzz"]).db == os.environ["DYNFUZZ_DB"]


def test_cuda_without_cuda_is_a_usage_error():
    import torch

    if torch.cuda.is_available():
        pytest.skip("CUDA is available here")
    r = dynfuzz("fuzz", "--device", "cuda", "--budget", "1s")
    assert r.returncode == 2 and "CUDA is not available" in r.stderr


def test_check_on_unparsable_or_incomplete_file(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("def f(:\n")
    r = dynfuzz("check", str(bad))
    assert r.returncode == 2 and "does not parse" in r.stderr and "Traceback" not in r.stderr
    incomplete = tmp_path / "noinputs.py"
    incomplete.write_text("def f(x):\n    return x\n")
    r = dynfuzz("check", str(incomplete))
    assert r.returncode == 2 and "inputs" in r.stderr
    r = dynfuzz("check", str(tmp_path / "missing.py"))
    assert r.returncode == 2 and "cannot read" in r.stderr


def test_check_hand_written_program(tmp_path):
    prog = tmp_path / "prog.py"
    prog.write_text(textwrap.dedent("""
        import torch
        def f(x):
            return x * 2
        def inputs(device, call=0):
            return (torch.arange(3.0, device=device),)
    """))
    assert dynfuzz("check", str(prog)).returncode == 0
    r = dynfuzz("check", str(prog), "--compiler", "perturb-output")
    assert r.returncode == 1 and "outputs/miscompile" in r.stdout


def test_budget_parsing():
    from dynfuzz.budget import parse_duration

    assert parse_duration("30s") == 30 and parse_duration("10m") == 600 and parse_duration("2h") == 7200
    assert parse_duration("1h30m") == 5400 and parse_duration("45") == 45


def test_entry_bound_by_tuple_assignment_from_a_factory_is_found(tmp_path):
    prog = tmp_path / "factory.py"
    prog.write_text(textwrap.dedent("""
        import torch
        def make():
            k = 2
            def f(x):
                return x * k
            def helper():
                return k
            return f, helper
        f, helper = make()
        def inputs(device, call=0):
            return (torch.ones(2, device=device),)
    """))
    assert read_program(prog).case.entry == "f"


def test_a_reader_that_leaves_early_is_not_an_internal_error():
    """`dynfuzz sample -n 200 | head -1` closes the pipe mid-print: no 'internal error' line, no traceback
    file; the exit is the shell's SIGPIPE status (141), as for any filter cut short."""
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.Popen([sys.executable, "-m", "dynfuzz", "sample", "-n", "200", "--seed", "1"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=os.getcwd(), env=env)
    proc.stdout.readline()
    proc.stdout.close()
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=300) == 141, err
    assert "internal error" not in err and "Traceback" not in err, err
