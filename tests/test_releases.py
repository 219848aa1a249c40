"""`dynfuzz releases`: release environments, the release matrix and its verdicts, bisect, the campaign write-back,
and known issues verified on a release their entry does not list.

The tests use a fake installer: a "release environment" whose python is this interpreter with
`DYNFUZZ_FAKE_RELEASE=<release>` set, and fixture repros whose compiled program goes wrong only under some of
those values. Tests marked `releases` use a real release environment (docs/releases.md, "CI").
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from dynfuzz.cli import main
from dynfuzz.errors import UsageError
from dynfuzz.releases import environments
from dynfuzz.releases.bisect import narrow
from dynfuzz.releases.environments import EnvStore, commit_of
from dynfuzz.releases.installer import InstallError, is_release, requirements, version_key
from dynfuzz.releases.matrix import Cell, Row, decide, format_table, run_matrix, settle
from dynfuzz.releases.repros import Repro, discover
from dynfuzz.triage.known import KnownIssues

ROOT = Path(__file__).resolve().parents[1]
FAKE = "DYNFUZZ_FAKE_RELEASE"


class FakeInstaller:
    """Builds a "release environment" in a blink: its python runs this interpreter with FAKE=<release>."""

    def __init__(self, releases=("2.1.0", "2.2.0", "2.3.0"), broken=(), size=1000):
        self.releases, self.broken, self.size = list(releases), set(broken), size
        self.created: list[str] = []
        self.linked: list[Path] = []

    def available(self):
        return sorted(self.releases, key=version_key)

    def create(self, venv: Path, release: str, checkout: Path) -> str:
        if release in self.broken:
            raise InstallError("ResolutionImpossible: no matching distribution for this platform")
        self.created.append(release)
        (venv / "bin").mkdir(parents=True)
        python = venv / "bin" / "python"
        python.write_text(f'#!/bin/sh\n{FAKE}={release} exec "{sys.executable}" "$@"\n')
        python.chmod(0o755)
        with open(venv / "blob", "wb") as fh:
            fh.truncate(self.size)  # sparse: counted by size, costs no disk
        return f"{release}+fake"

    def adopt(self, venv, release, checkout, source):
        raise InstallError("the fake installer adopts nothing")

    def link_checkout(self, venv: Path, checkout: Path) -> None:
        self.linked.append(checkout)


PROGRAM = '''
import os
import torch

MODE = os.environ.get("DYNFUZZ_FAKE_RELEASE", "")

def f(x):
    if torch.compiler.is_compiling() and MODE in {wrong!r}:
        return x * 2
    if torch.compiler.is_compiling() and MODE in {other!r}:
        return x.double()
    return x + 0

def inputs(device, call=0):
    return (torch.ones(3, device=device),)
'''


def fixture_repro(folder: Path, name: str, wrong: tuple[str, ...], other: tuple[str, ...] = ()) -> Path:
    """A repro (with metadata, as a corpus entry) that gives a wrong value on the releases in `wrong`, a wrong
    dtype (another signature) on those in `other`, and agrees elsewhere. Its signature is the wrong value's."""
    from dynfuzz.run.compilers import CompileSpec, make_compiler
    from dynfuzz.triage.repro import read_program

    path = folder / f"{name}.py"
    program = PROGRAM.format(wrong=wrong, other=other)
    meta = {"oracle": "outputs", "kind": "miscompile", "backend": "eager", "device": "cpu", "compiler": "torch",
            "entry": "f", "status": "open"}
    path.write_text(f'"""fixture {name}"""\nDYNFUZZ = {meta!r}\n\nPROGRAM = r\'\'\'{program}\'\'\'\n')
    from dynfuzz.run.judge import judge

    saved = read_program(path)
    old = os.environ.get(FAKE)
    os.environ[FAKE] = wrong[0]
    try:
        spec = CompileSpec()
        (finding,) = judge(saved.case, make_compiler(spec), spec).findings
    finally:
        os.environ.pop(FAKE) if old is None else os.environ.__setitem__(FAKE, old)
    meta["signature"] = finding.signature
    path.write_text(f'"""fixture {name}"""\nDYNFUZZ = {meta!r}\n\nPROGRAM = r\'\'\'{program}\'\'\'\n')
    return path


@pytest.fixture
def fake(monkeypatch, tmp_path):
    """The fake installer in place of pip, and a cache folder of this test's own."""
    installer = FakeInstaller()
    monkeypatch.setattr(environments, "default_installer", lambda: installer)
    monkeypatch.setenv("DYNFUZZ_CACHE_DIR", str(tmp_path / "cache"))
    return installer


def one_line_error(capsys) -> str:
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("dynfuzz: error: "), err
    return err[0]


# ---- verdicts ----
def test_verdicts_over_release_outcomes():
    assert decide({"2.5.1": Cell("passes"), "2.13.0": Cell("reproduces"), "2.14.1": Cell("reproduces")}).text \
        == "regression since 2.13.0"
    assert decide({"2.5.1": Cell("reproduces"), "2.13.0": Cell("reproduces"), "2.14.1": Cell("passes")}).text \
        == "fixed in 2.14.1"
    assert decide({"2.5.1": Cell("reproduces"), "2.13.0": Cell("reproduces")}).text == "long-standing"
    assert decide({"2.5.1": Cell("reproduces"), "2.13.0": Cell("differs")}).text == "changed"
    assert decide({"2.10.0": Cell("passes"), "2.9.1": Cell("reproduces")}).text == "fixed in 2.10.0", \
        "releases sort by number, not text"
    na = decide({"2.5.1": Cell("n/a"), "2.13.0": Cell("reproduces"), "2.14.1": Cell("reproduces")})
    assert na.text == "long-standing", "n/a on a release is never counted as a pass"
    assert decide({"2.5.1": Cell("error"), "2.13.0": Cell("n/a")}).text == "undecided"
    assert decide({"2.5.1": Cell("passes"), "2.13.0": Cell("passes")}).text == "not reproduced"
    regression = decide({"2.5.1": Cell("passes"), "2.9.1": Cell("passes"), "2.13.0": Cell("reproduces")})
    assert (regression.deciding, regression.previous) == ("2.9.1", "2.9.1"), "the last pass before it decides"


def test_a_deciding_pass_is_confirmed_and_an_intermittent_one_turns_into_a_failure():
    from concurrent.futures import ThreadPoolExecutor

    runs: dict[str, int] = {}

    def runner(repro, python):  # 2.13.0 passes the first two times, then fails: intermittent
        runs[python] = runs.get(python, 0) + 1
        if python == "2.13.0":
            return Cell("passes", passed=1) if runs[python] <= 2 else Cell("reproduces", "k")
        return Cell("passes", passed=1) if python == "2.9.1" else Cell("reproduces", "k")

    repro = Repro(Path("x.py"), "x")
    row = Row(repro, {r: runner(repro, r) for r in ("2.9.1", "2.13.0", "2.14.1")})
    assert decide(row.cells).text == "regression since 2.14.1"
    with ThreadPoolExecutor(2) as pool:
        settle([row], lambda repro, rel: rel, pool, 3, runner)
    assert row.cells["2.13.0"].outcome == "reproduces" and "passed 2 of 4 runs" in row.cells["2.13.0"].detail
    assert row.verdict.text == "regression since 2.13.0", "decided again once the pass did not hold"
    assert row.cells["2.9.1"].runs == 4 and row.cells["2.9.1"].outcome == "passes", "the new deciding pass held"
    assert runs["2.14.1"] == 1, "failures are not re-run"


# ---- the matrix, through the command line, with the fake installer ----
def test_a_fixture_repro_failing_on_one_release_gives_regression_since_and_fixed_in(fake, tmp_path, capsys):
    regressed = fixture_repro(tmp_path, "regressed", ("2.2.0",))
    fixed = fixture_repro(tmp_path, "fixed", ("2.1.0",))
    changed = fixture_repro(tmp_path, "changed", ("2.1.0",), other=("2.2.0",))
    out_json = tmp_path / "matrix.json"
    assert main(["releases", "check", str(regressed), str(fixed), str(changed), "--torch", "2.2.0,2.1.0",
                 "--jobs", "2", "--confirm", "1", "--json", str(out_json)]) == 0
    out = capsys.readouterr().out
    lines: dict[str, list[str]] = {}
    for line in out.splitlines():
        if line.split():
            lines.setdefault(line.split()[0], line.split())
    assert lines["repro"][:3] == ["repro", "2.1.0", "2.2.0"], "columns oldest first"
    assert lines["regressed"][1:] == ["passes", "reproduces", "regression", "since", "2.2.0"]
    assert lines["fixed"][1:] == ["reproduces", "passes", "fixed", "in", "2.2.0"]
    assert lines["changed"][1:] == ["reproduces", "differs", "changed"]
    assert "changed on 2.2.0: fails differently: miscompile: wrong output metadata" in out, "named by its identity"
    rows = {r["name"]: r for r in json.loads(out_json.read_text())["rows"]}
    assert rows["regressed"]["releases"]["2.1.0"]["runs"] == 2, "the deciding pass ran once more (--confirm 1)"
    assert rows["fixed"]["releases"]["2.2.0"]["passed"] == 2
    assert rows["changed"]["releases"]["2.1.0"]["key"] == "outputs/wrong-value: tensor ops"
    assert sorted(fake.created) == ["2.1.0", "2.2.0"]


def test_a_release_that_cannot_be_installed_is_one_line_and_exit_2(fake, tmp_path, capsys):
    fake.broken.add("2.3.0")
    repro = tmp_path / "plain.py"
    repro.write_text("raise SystemExit(0)\n")
    assert main(["releases", "check", str(repro), "--torch", "2.3.0"]) == 2
    line = one_line_error(capsys)
    assert "torch 2.3.0 cannot be installed" in line and "ResolutionImpossible" in line
    assert not (tmp_path / "cache" / "releases" / "2.3.0").exists(), "nothing half-built is left behind"


def test_bad_input_is_one_line_and_exit_2(fake, tmp_path, capsys):
    repro = tmp_path / "plain.py"
    repro.write_text("raise SystemExit(0)\n")
    for torch in ("banana", "2.14.1rc1", ",", "9.9.9"):
        assert main(["releases", "check", str(repro), "--torch", torch]) == 2, torch
        line = one_line_error(capsys)
        assert "release" in line, line
    assert "9.9.9" in line and "2.1.0" in line, "an unknown release names what the index lists"
    (tmp_path / "notes.txt").write_text("x")
    (tmp_path / "empty").mkdir()
    for path in (tmp_path / "missing.py", tmp_path / "notes.txt", tmp_path / "empty"):
        assert main(["releases", "check", str(path), "--torch", "2.1.0"]) == 2
        one_line_error(capsys)
    assert main(["releases", "remove", "2.2.0"]) == 2 and "no environment" in one_line_error(capsys)
    cache_file = tmp_path / "cache-file"
    cache_file.write_text("")
    os.environ["DYNFUZZ_CACHE_DIR"] = str(cache_file)
    for argv in (["releases", "check", str(repro), "--torch", "2.1.0"], ["releases", "list"]):
        assert main(argv) == 2
        assert "not a folder" in one_line_error(capsys)
    assert fake.created == []


def test_plain_scripts_are_judged_by_exit_status_and_a_missing_api_is_na(fake, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)  # paths given relative to here: each repro runs in its own folder
    (tmp_path / "s").mkdir()
    plain = tmp_path / "s" / "exits.py"
    plain.write_text("import os, sys\nsys.exit(1 if os.environ['DYNFUZZ_FAKE_RELEASE'] == '2.2.0' else 0)\n")
    lacking = tmp_path / "s" / "lacking.py"
    lacking.write_text("import os, torch\nif os.environ['DYNFUZZ_FAKE_RELEASE'] == '2.1.0':\n"
                       "    torch.compiler.no_such_api_in_this_release\nraise SystemExit(1)\n")
    assert main(["releases", "check", "s/exits.py", "s/lacking.py", "--torch", "2.1.0,2.2.0", "--confirm", "0"]) == 0
    out = capsys.readouterr().out
    assert "exits    passes  reproduces  regression since 2.2.0" in out
    assert "lacking  n/a     reproduces  long-standing" in out, "n/a is never a pass"
    assert "lacking on 2.1.0: n/a: no torch.compiler.no_such_api_in_this_release" in out



def test_a_program_without_metadata_is_judged_by_the_oracles_not_run_as_a_script(fake, tmp_path, capsys):
    """A program-convention file (`f` + `inputs`, what `dynfuzz check` accepts) defines functions and exits 0 when
    run as a script; `releases check` judges it as a program, so its divergence on one release shows."""
    for name, wrong in (("regressed", ("2.2.0",)), ("fixed", ("2.1.0",))):
        (tmp_path / f"{name}.py").write_text(PROGRAM.format(wrong=wrong, other=()))
    assert main(["releases", "check", str(tmp_path / "regressed.py"), str(tmp_path / "fixed.py"),
                 "--torch", "2.1.0,2.2.0", "--confirm", "0"]) == 0
    rows = {line.split()[0]: line.split()[1:] for line in capsys.readouterr().out.splitlines() if line.split()}
    assert rows["regressed"] == ["passes", "reproduces", "regression", "since", "2.2.0"]
    assert rows["fixed"] == ["reproduces", "passes", "fixed", "in", "2.2.0"]


CRASH_THEN_WRONG = '''
import os
import torch

MODE = os.environ.get("DYNFUZZ_FAKE_RELEASE", "")

def f(x):
    if torch.compiler.is_compiling() and MODE == "2.1.0":
        x = x.view(-1, 7)  # fails while tracing only: the compiler crashes
    if torch.compiler.is_compiling() and MODE == "2.2.0":
        return x * 2  # the crash became a silent wrong value
    return x + 0

def inputs(device, call=0):
    return (torch.ones(3, device=device),)
'''


def test_a_crash_repro_whose_compiled_call_returns_a_wrong_value_later_is_differs(fake, tmp_path, capsys):
    """A crash's repro is judged on every oracle (and its script compares values once compiled returns): on a
    release where the crash became a wrong value it is `differs`, never `passes`."""
    from dynfuzz.generators.case import Case
    from dynfuzz.run.compilers import CompileSpec, make_compiler
    from dynfuzz.run.judge import judge
    from dynfuzz.triage.repro import metadata_for, render_repro
    from dynfuzz.triage.repro_meta import write_repro

    case, spec = Case(source=CRASH_THEN_WRONG), CompileSpec()
    os.environ[FAKE] = "2.1.0"
    try:
        (finding,) = judge(case, make_compiler(spec), spec).findings
    finally:
        os.environ.pop(FAKE)
    assert finding.oracle == "exceptions"
    path = write_repro(tmp_path / "crash" / "repro.py", render_repro(case, finding, spec,
                                                                     metadata_for(case, finding, spec)))
    assert main(["releases", "check", str(path.parent), "--torch", "2.1.0,2.2.0", "--confirm", "0"]) == 0
    out = capsys.readouterr().out
    assert "crash  reproduces  differs  changed" in out, out
    for release, code in (("2.1.0", 1), ("2.2.0", 1), ("2.3.0", 0)):  # the script alone, in a fresh process
        done = subprocess.run([sys.executable, str(path)], capture_output=True, text=True,
                              env={**os.environ, FAKE: release})
        assert done.returncode == code, (release, done.stderr[-2000:])
        assert code == 0 or "AssertionError" in done.stderr

# ---- environments ----
def test_a_cached_environment_is_reused_not_rebuilt_and_a_moved_checkout_is_relinked(tmp_path):
    installer = FakeInstaller()
    with EnvStore(tmp_path, installer, checkout=ROOT, log=lambda s: None) as store:
        first = store.get("2.1.0")
    with EnvStore(tmp_path, installer, checkout=ROOT, log=lambda s: None) as store:
        again = store.get("2.1.0")
        assert store.get("2.1.0").created == again.created, "a second get in one store neither blocks nor rebuilds"
    assert installer.created == ["2.1.0"] and again.created == first.created
    assert again.torch == "2.1.0+fake" and again.commit.split("+")[0] == commit_of(ROOT).split("+")[0]
    assert len(again.commit.split("+")[0]) == 40
    with EnvStore(tmp_path, installer, checkout=tmp_path / "elsewhere", log=lambda s: None) as store:
        moved = store.get("2.1.0")
    assert installer.created == ["2.1.0"] and installer.linked == [tmp_path / "elsewhere"]
    assert moved.checkout == str(tmp_path / "elsewhere")


def test_a_half_built_environment_is_rebuilt(tmp_path):
    installer = FakeInstaller()
    half = tmp_path / "releases" / "2.1.0" / "venv" / "bin"
    half.mkdir(parents=True)
    (half / "python").write_text("cut off before the marker was written")
    lines: list[str] = []
    with EnvStore(tmp_path, installer, checkout=ROOT, log=lines.append) as store:
        assert [(name, env) for name, env in store.listing()] == [("2.1.0", None)]
        env = store.get("2.1.0")
    assert installer.created == ["2.1.0"] and "rebuilding a half-built environment" in lines[0]
    assert "DYNFUZZ_FAKE_RELEASE=2.1.0" in Path(env.python).read_text()


def test_least_recently_used_environments_are_evicted_over_the_cap_but_not_one_in_use(tmp_path):
    installer = FakeInstaller(size=10 << 20)
    quiet = {"installer": installer, "checkout": ROOT, "log": lambda s: None, "cap": 25 << 20}
    for rel in ("2.1.0", "2.2.0"):
        with EnvStore(tmp_path, **quiet) as store:
            store.get(rel)
    old = time.time() - 3600
    os.utime(tmp_path / "releases" / "2.2.0" / "last-used", (old, old))  # 2.1.0 used more recently
    with EnvStore(tmp_path, **quiet) as store:
        store.get("2.3.0")
        assert [n for n, env in store.listing() if env] == ["2.1.0", "2.3.0"], "the least recently used went"
    os.utime(tmp_path / "releases" / "2.1.0" / "last-used", (old, old))
    with EnvStore(tmp_path, **quiet) as holder:
        holder.get("2.1.0")  # in use by another command: never evicted, however old
        with EnvStore(tmp_path, **quiet) as store:
            store.get("2.2.0")
            assert [n for n, env in store.listing() if env] == ["2.1.0", "2.2.0"]


def test_releases_list_and_remove(fake, tmp_path, capsys):
    assert main(["releases", "install", "2.1.0"]) == 0
    assert main(["releases", "list"]) == 0
    out = capsys.readouterr().out
    assert "2.1.0" in out and "2.1.0+fake" in out
    assert main(["releases", "available"]) == 0 and "2.1.0 2.2.0 2.3.0" in capsys.readouterr().out
    assert main(["releases", "remove", "2.1.0"]) == 0
    assert not (tmp_path / "cache" / "releases" / "2.1.0").exists()


def test_requirements_come_from_the_checkout_without_torch():
    reqs = requirements(ROOT)
    assert reqs and not any(r.startswith("torch") for r in reqs) and any(r.startswith("hypothesis") for r in reqs)
    assert is_release("2.14.1") and is_release("2.5") and not is_release("2.14.1+cpu")


# ---- bisect ----
def test_bisect_narrows_over_every_installable_release_in_few_installs(tmp_path):
    releases = ["2.5.1", "2.6.0", "2.7.0", "2.7.1", "2.8.0", "2.9.0", "2.9.1", "2.10.0", "2.11.0", "2.12.0",
                "2.13.0"]
    installer = FakeInstaller(releases, broken={"2.10.0"})

    def runner(repro, python):  # fails from 2.9.0 on
        rel = Path(python).read_text().split(f"{FAKE}=")[1].split()[0]
        return Cell("reproduces", "k") if version_key(rel) >= (2, 9, 0) else Cell("passes", passed=1)

    with EnvStore(tmp_path, installer, checkout=ROOT, log=lambda s: None) as store:
        envs = {r: store.get(r) for r in ("2.5.1", "2.13.0")}
        (row,) = run_matrix([Repro(Path("x.py"), "x")], envs, confirm=0, runner=runner)
        assert row.verdict.text == "regression since 2.13.0"
        record = narrow(row, store, store.available(), confirm=0, runner=runner, log=lambda s: None)
    assert row.verdict.text == "regression since 2.9.0" and record["between"] == ["2.8.0", "2.9.0"]
    assert record["tried"].get("2.10.0") in (None, "cannot be installed")
    assert len(installer.created) - 2 <= 4, "9 candidates: about log2(9) installs"
    assert "bisected to 2.8.0 .. 2.9.0" in format_table([row], ["2.5.1", "2.13.0"])


# ---- a campaign folder ----
def test_a_campaign_folder_gets_the_matrix_in_summary_bucket_reports_and_report(fake, tmp_path, capsys):
    out = tmp_path / "out"
    buckets = []
    for name, wrong in (("regressed", ("2.2.0",)), ("fixed", ("2.1.0",))):
        folder = out / "findings" / f"{name}-0123456789ab"
        folder.mkdir(parents=True)
        fixture_repro(tmp_path, name, wrong).rename(folder / "repro.py")
        (folder / "report.md").write_text(f"# a bug report for {name}\n\n- **Fails on releases:** not checked\n")
        buckets.append({"id": name, "key": f"outputs/wrong-value: {name}", "class": "wrong-value",
                        "tier": "miscompile", "oracle": "outputs", "status": "ok", "count": 1,
                        "folder": str(folder), "repro": str(folder / "repro.py")})
    (out / "summary.json").write_text(json.dumps({"torch": "2.13.0", "cases": 5, "bugs": 2, "buckets": buckets}))
    assert main(["releases", "check", str(out), "--torch", "2.1.0,2.2.0", "--confirm", "0"]) == 0
    assert "1 bucket(s) fixed in a newer release, 1 bug(s)" in capsys.readouterr().out
    summary = json.loads((out / "summary.json").read_text())
    rows = {b["id"]: b for b in summary["buckets"]}
    assert rows["fixed"]["fixed_in"] == "2.2.0" and "fixed_in" not in rows["regressed"]
    assert rows["regressed"]["release_verdict"] == "regression since 2.2.0"
    assert rows["regressed"]["releases"] == {"2.1.0": {"outcome": "passes", "key": None},
                                             "2.2.0": {"outcome": "reproduces", "key": "outputs/wrong-value: "
                                                                                       "tensor ops"}}
    assert summary["releases"] == {"tried": ["2.1.0", "2.2.0"], "builds": {"2.1.0": "2.1.0+fake",
                                                                           "2.2.0": "2.2.0+fake"}, "fixed": 1}
    assert summary["bugs"] == 1, "a bucket fixed in the newest release tried is not a bug"
    report = (out / "findings" / "fixed-0123456789ab" / "report.md").read_text()
    assert report.startswith("# a bug report for fixed") and "Verdict: **fixed in 2.2.0**" in report
    assert "| 2.1.0 | 2.1.0+fake | reproduces |" in report
    assert "- **Fails on releases:** 2.1.0 (passes on 2.2.0); fixed in 2.2.0\n" in report  # the line under the title
    page = (out / "report.md").read_text()
    assert "fixed in 2.2.0" in page and "regression since 2.2.0" in page and "## Fixed in a newer release" in page
    html = (out / "report.html").read_text()
    assert "regression since 2.2.0" in html and 'id="fixed-buckets"' in html
    assert main(["releases", "check", str(out), "--torch", "2.1.0,2.2.0", "--confirm", "0"]) == 0
    again = (out / "findings" / "fixed-0123456789ab" / "report.md").read_text()
    assert again.count("### Torch releases") == 1, "a second check replaces the section"


# ---- known issues on a release an entry does not list ----
def test_known_entries_are_verified_once_on_an_unlisted_release_and_fixed_ones_match_nothing():
    calls = []

    def verifier(entries, release):
        calls.append((release, [item["key"] for item, _paths in entries]))
        return [[item["key"]] if "still" in item["key"] else [] for item, _paths in entries]

    known = KnownIssues(issues=[{"key": "miscompile: side effect still here", "torch": ["2.13.0"], "corpus": "a.py"},
                                {"key": "miscompile: side effect gone", "torch": ["2.13.0"], "corpus": "b.py"},
                                {"key": "crash: KeyError in torch/_dynamo/x.py:other", "torch": ["2.13.0"]}],
                        verifier=verifier)
    assert known.match("miscompile: side effect still here", "2.13.0+cpu") is not None
    assert calls == [], "listed releases need no verification"
    assert known.match("miscompile: side effect still here @dynamo", "2.14.1") is None
    assert calls == [("2.14.1", ["miscompile: side effect still here", "miscompile: side effect gone"])], \
        "verified the first time a finding shares the oracle and class, and only those entries"
    assert known.match("miscompile: side effect still here", "2.14.1+cu130") is not None
    assert known.match("miscompile: side effect gone", "2.14.1") is None, "FIXED on 2.14.1: not known there"
    assert len(calls) == 1, "verified once per release"
    rows = {r["key"]: r for r in known.verifications()}
    assert rows["miscompile: side effect gone"]["reproduces"] is False
    assert rows["miscompile: side effect still here"] == {"key": "miscompile: side effect still here", "corpus": "a.py",
                                                      "torch": "2.14.1", "reproduces": True,
                                                      "keys": ["miscompile: side effect still here"]}
    assert KnownIssues(issues=known.issues).match("miscompile: side effect still here", "2.14.1") is None, \
        "without a verifier an entry matches on its listed releases only"


def test_the_repro_verifier_runs_an_entry_once_per_release_and_caches(tmp_path):
    from dynfuzz.releases.known_verifier import ReproVerifier

    os.environ[FAKE] = "2.2.0"  # inherited by the probe's process: the fixture diverges there
    try:
        repro = fixture_repro(tmp_path, "entry", ("2.2.0",))
        lines: list[str] = []
        verifier = ReproVerifier(tmp_path / "cache", log=lines.append)
        item = {"key": "outputs/wrong-value: tensor ops"}
        assert verifier([(item, [repro])], "9.1.0") == [["outputs/wrong-value: tensor ops"]]
        assert verifier([(item, [repro])], "9.1.0") == [["outputs/wrong-value: tensor ops"]] and verifier.ran == 1
        os.environ[FAKE] = "2.1.0"
        assert verifier([(item, [repro])], "9.2.0") == [[]] and "FIXED on 9.2.0" in lines[-1]
    finally:
        os.environ.pop(FAKE, None)


def test_known_issues_are_verified_in_the_background_and_a_match_waits_only_for_its_own_entry(tmp_path):
    """Note [Known issues are verified beside the campaign]: `verifying` starts verifying, in a background thread,
    the entries that do not list the running release; a match asking for an entry the thread is running waits for
    it and reads its answer, so each repro runs once; the entries listing the running release are not run."""
    from dynfuzz.releases.known_verifier import ReproVerifier, unlisted, verifying

    os.environ[FAKE] = "2.2.0"
    try:
        repros = [fixture_repro(tmp_path, f"entry{i}", ("2.2.0",)) for i in range(3)]
        issues = [{"key": f"outputs/wrong-value: entry {i}", "corpus": str(r), "torch": ["0.0.1"]}
                  for i, r in enumerate(repros)]
        known = KnownIssues(issues=issues + [{"key": "outputs/wrong-value: listed", "torch": ["9.1.0"]}])
        entries = unlisted(known, "9.1.0")
        assert [item["key"] for item, _ in entries] == [i["key"] for i in issues]
        verifier = ReproVerifier(tmp_path / "cache", log=lambda line: None)
        verifier.prefetch(entries, "9.1.0", nice=0)
        assert verifier.background is not None and verifier.background.is_alive()
        produced = ["outputs/wrong-value: tensor ops"]  # the key the fixture's repro gets
        assert verifier([entries[0]], "9.1.0") == [produced]
        verifier.background.join(120)
        assert verifier.ran == 3, "every entry verified once, the one both asked for included"
        assert verifier(entries, "9.1.0") == [produced] * 3 and verifier.ran == 3
    finally:
        os.environ.pop(FAKE, None)
    installed = verifying(KnownIssues(issues=[{"key": "outputs/wrong-value: x", "torch": ["0.0.1"]}]),
                          prefetch=False)
    assert isinstance(installed.verifier, ReproVerifier) and installed.verifier.background is None


def test_an_unlisted_entry_is_known_only_once_verified_and_its_time_is_counted_apart():
    """An entry listing other releases matches an identity key on this one only after its repros were verified
    here (the seconds a match waited for the verifier kept in `verify_seconds`); FIXED here
    (its repros agree), it matches nothing; a cheap key never matches, verified or not."""
    key = "miscompile: missing guard on int @dynamo"
    calls = []

    def slow_verifier(entries, release):
        calls.append(release)
        time.sleep(0.3)
        return [[item["key"]] for item, _paths in entries]

    known = KnownIssues(issues=[{"key": key, "torch": ["0.0.1"]}], verifier=slow_verifier)
    assert known.match(key, "2.13.0+cpu") is known.issues[0] and calls == ["2.13.0"]
    assert known.verify_seconds >= 0.3 and [v["reproduces"] for v in known.verifications()] == [True]
    assert known.match(key, "2.13.0") is known.issues[0] and calls == ["2.13.0"], "verified once per release"
    assert KnownIssues(issues=[{"key": key, "torch": ["0.0.1"]}]).match(key, "2.13.0") is None
    fixed = KnownIssues(issues=[{"key": key, "torch": ["0.0.1"]}], verifier=lambda entries, rel: [[] for _ in entries])
    assert fixed.match(key, "2.13.0") is None and [v["reproduces"] for v in fixed.verifications()] == [False]
    cheap = "outputs/wrong-value: int argument"
    assert KnownIssues(issues=[{"key": cheap}], verifier=slow_verifier).match(cheap, "2.13.0") is None


def test_discover_leaves_seed_scenarios_out_of_a_corpus_folder():
    found = discover([str(ROOT / "corpus")])
    names = {r.name for r in found.repros}
    assert found.seeds_left_out > 0 and "list_contains_dynamic_int" in names
    assert all(r.meta.get("status") != "passing" for r in found.repros)
    with pytest.raises(UsageError):
        discover([str(ROOT / "docs")])


# ---- a real release environment (CI builds one: .ci/run) ----
REAL = os.environ.get("DYNFUZZ_RELEASE_TEST_TORCH", "2.14.1")
ASKED = "DYNFUZZ_RELEASE_TEST_TORCH" in os.environ  # the release job (.ci/run step 4) names the release it built


@pytest.fixture(scope="module")
def real_env():
    """The real environment of REAL from the release cache, for the release job only (DYNFUZZ_RELEASE_TEST_TORCH
    set, as .ci/run's step 4 does): README's test command skips these tests whatever the machine's cache holds, so
    its outcome never depends on an environment left there. Absent, the tests skip with the reason (under
    DYNFUZZ_RELEASE_TESTS=required, as .ci/run sets it under CI=true, they fail instead)."""
    if not ASKED:
        pytest.skip("a real release environment's tests run in their own job: DYNFUZZ_RELEASE_TEST_TORCH=2.14.1 "
                    "pytest -m releases tests/test_releases.py (.ci/run's step 4)")
    store = EnvStore(checkout=ROOT, log=lambda s: None)
    if store.read(REAL) is None:
        reason = (f"no torch {REAL} release environment in {store.root}: build it with `dynfuzz releases install "
                  f"{REAL}` (.ci/run does)")
        if os.environ.get("DYNFUZZ_RELEASE_TESTS") == "required":
            pytest.fail(reason)
        pytest.skip(reason)
    with store:
        yield store.get(REAL)  # re-linked to this checkout: the one it was built from may be gone


@pytest.mark.releases
def test_corpus_entries_on_a_real_release_agree_with_replay_run_there(real_env, tmp_path):
    from dynfuzz.releases.matrix import run_once

    names = ["list_contains_dynamic_int", "hook_handle_remove_crash", "bytearray_iadd_recursion_crash",
             "deque_maxlen_appendleft_lost"]
    paths = [ROOT / "corpus" / f"{n}.py" for n in names]
    done = subprocess.run([real_env.python, "-m", "dynfuzz", "replay", *map(str, paths), "--workers", "0"],
                          capture_output=True, text=True, timeout=1200, cwd=str(ROOT))
    verdicts = {}
    for line in done.stdout.splitlines():
        parts = line.split()
        if parts and parts[0] in names:
            verdicts[parts[0]] = " ".join(parts[3:])
    assert set(verdicts) == set(names), done.stdout + done.stderr
    as_outcome = {"still failing": "reproduces", "FIXED": "passes", "CHANGED": "differs"}
    for path in paths:
        found = discover([str(path)]).repros[0]
        assert run_once(found, real_env.python).outcome == as_outcome[verdicts[path.stem]], path.stem


@pytest.mark.releases
def test_a_bisect_over_a_fixture_range_with_a_real_release(real_env, tmp_path):
    """The running torch (adopted, no download) and REAL, a fixture repro failing from REAL on, and a fixture
    range of releases in between of which one cannot be installed: narrowed to the two real ones."""
    import torch
    from dynfuzz.releases.installer import PipInstaller

    here = torch.__version__.split("+")[0]
    if version_key(here) >= version_key(REAL):
        pytest.skip(f"needs a running torch older than {REAL}")
    repro = tmp_path / "from_real.py"
    repro.write_text(textwrap.dedent(f"""\
        import sys, torch
        sys.exit(1 if tuple(int(p) for p in torch.__version__.split("+")[0].split(".")) >= {version_key(REAL)}
                 else 0)
        """))

    class Fixture(PipInstaller):
        def available(self):
            return [here, "2.13.99", REAL]

        def create(self, venv, release, checkout):
            raise InstallError(f"fixture: {release} is not installed in this test")

    with EnvStore(tmp_path / "cache", Fixture(), checkout=ROOT, log=lambda s: None) as store:
        envs = {here: store.get(here, Path(sys.prefix)), REAL: real_env}
        (row,) = run_matrix([Repro(repro, "from_real")], envs, confirm=1)
        assert row.verdict.text == f"regression since {REAL}"
        record = narrow(row, store, store.available(), confirm=1, log=lambda s: None)
    assert record == {"between": [here, REAL], "tried": {"2.13.99": "cannot be installed"}}


def test_a_corpus_entry_under_pytest_follows_its_known_entry_across_releases(tmp_path):
    import torch
    from dynfuzz.pytest_plugin import on_this_release
    from dynfuzz.triage.known import release

    here = release(torch.__version__)
    entry = tmp_path / "entry.py"
    entry.write_text("")

    def state(**fields):
        return on_this_release({"signature": "s"}, entry, KnownIssues(issues=[{"key": "k", "corpus": "entry.py",
                                                                               **fields}], path=tmp_path / "k.toml"))

    assert state(torch=[here]) is None, "listed: it reproduces here (xfail, strict)"
    assert state(torch=["0.0.1"]) == "unlisted", "not recorded here: xfail, not strict"
    assert state(torch=["0.0.1"], fixed_in=here) == "fixed", "fixed here: it must agree"
    assert state(torch=[here], fixed_in="99.0.0") is None
    nothing = KnownIssues(path=tmp_path / "k.toml")
    assert on_this_release({"signature": "s", "torch": "0.0.1+cpu"}, entry, nothing) == "unlisted", \
        "an open entry with no known-issues entry is recorded on the release its metadata names"
    assert on_this_release({"signature": "s", "torch": f"{here}+cpu"}, entry, nothing) is None


def test_workflows_pin_the_torch_release_every_known_issue_lists():
    import re
    import tomllib

    known = tomllib.loads((ROOT / "corpus" / "known_issues.toml").read_text())["issue"]
    # the release (nearly) every entry was recorded on: a bug that only exists on other releases (a crash on 2.13
    # that is a silent wrong value on 2.14.1) has an entry of its own that does not list it
    listed = [{str(v) for v in (i.get("torch") or [])} for i in known]
    everywhere = {r for r in set().union(*listed) if sum(r in s for s in listed) >= 0.9 * len(listed)}
    newest = []
    for wf in sorted((ROOT / ".github" / "workflows").glob("*.yml")):
        installs = re.findall(r"pip install (torch\S*)(.*)", wf.read_text())
        assert installs, wf.name
        for spec, comment in installs:  # the suite's torch is listed; a later install is the newest release
            assert spec.startswith("torch=="), (wf.name, spec)
            assert spec.split("==")[1] in everywhere or "newest release" in comment, (wf.name, spec)
            newest += [spec] if "newest release" in comment else []
    assert len(set(newest)) <= 1, newest


def test_record_writes_where_each_entry_reproduces_and_fixed_in(tmp_path):
    from dynfuzz.releases.known_record import record

    for name in ("a", "b", "c"):
        (tmp_path / f"{name}.py").write_text("")
    toml = tmp_path / "known_issues.toml"
    KnownIssues(issues=[{"key": "k/a: x", "corpus": "a.py", "torch": ["2.13.0"]},
                        {"key": "k/b: x", "corpus": ["b.py", "c.py"], "torch": ["2.13.0"], "fixed_in": "2.13.0"},
                        {"key": "k/c: untouched", "corpus": "missing.py", "torch": ["2.13.0"]}], path=toml).save()
    known = KnownIssues.load(toml)

    def row(name, verdict, **cells):
        return {"repro": str(tmp_path / f"{name}.py"), "verdict": verdict,
                "releases": {r.replace("_", "."): c for r, c in cells.items()}}

    rows = [row("a", "fixed in 2.14.1", **{"2_5_1": {"outcome": "reproduces", "key": "k/a: x @old"},
                                           "2_13_0": {"outcome": "reproduces", "key": "k/a: x"},
                                           "2_14_1": {"outcome": "passes", "key": None}}),
            row("b", "regression since 2.13.0", **{"2_5_1": {"outcome": "passes", "key": None},
                                                   "2_13_0": {"outcome": "reproduces", "key": "k/b: x"},
                                                   "2_14_1": {"outcome": "n/a", "key": None}})]
    assert len(record(known, rows)) == 2
    known.save()
    a, b, c = KnownIssues.load(toml).issues
    assert a["torch"] == ["2.5.1", "2.13.0"] and a["fixed_in"] == "2.14.1" and a["aliases"] == ["k/a: x @old"]
    assert b["torch"] == ["2.13.0"] and "fixed_in" not in b, "n/a decides nothing; a regression is not fixed"
    assert c == {"key": "k/c: untouched", "corpus": "missing.py", "torch": ["2.13.0"]}
