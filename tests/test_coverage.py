"""`fuzz --coverage`: per-process collection with first-reached lines per case, the merge into coverage.json,
never-entered functions, the reachable part of torch/_dynamo, and the CLI's checks."""
from __future__ import annotations

import json
import sys
import textwrap

import pytest
from dynfuzz.campaign.line_coverage import Collector, CoverageSpec, Tracker, package_dir
from dynfuzz.campaign.line_coverage_report import finish, functions, other_python_opcode, reachable
from dynfuzz.cli import main

PKG = "dynfuzz_cov_probe"


@pytest.fixture
def probe_pkg(tmp_path, monkeypatch):
    """A tiny package on sys.path: two functions, one of them with a nested function."""
    root = tmp_path / "src" / PKG
    root.mkdir(parents=True)
    (root / "__init__.py").write_text("")
    (root / "mod.py").write_text(textwrap.dedent("""\
        def first(x):
            y = x + 1
            return y


        class Box:
            def second(self, x):
                def inner():
                    return x * 2
                return inner()

            def never(self):
                return 0
        """))
    monkeypatch.syspath_prepend(str(tmp_path / "src"))
    monkeypatch.setenv("DYNFUZZ_CACHE_DIR", str(tmp_path / "cache"))
    yield root
    for name in [m for m in sys.modules if m.startswith(PKG)]:
        del sys.modules[name]


def test_collector_reports_only_first_reached_lines_and_finish_merges(probe_pkg, tmp_path):
    spec = CoverageSpec(tmp_path / "cov", (PKG,))
    collector = Collector(spec, "test")
    try:
        from dynfuzz_cov_probe import mod

        collector.new_lines()  # the import: module-level lines
        mod.first(1)
        after_first = collector.new_lines()
        mod.first(2)
        again = collector.new_lines()
        mod.Box().second(3)
        after_second = collector.new_lines()
    finally:
        collector.save()
    path = str(probe_pkg / "mod.py")
    assert after_first == {path: [2, 3]}
    assert again == {}
    assert after_second == {path: [8, 9, 10]}

    tracker = Tracker(spec)
    assert tracker.add(after_first) == 2 and tracker.add(after_first) == 0
    report = finish(spec, tracker, tmp_path)
    row = report["files"][f"{PKG}/mod.py"]
    # statements: def first, 2 lines; class, def second, def inner, return, return inner(); def never, return 0
    assert row["lines"] == 10 and row["covered"] == 9  # all but `return 0`
    assert json.loads((tmp_path / "coverage.json").read_text())["totals"]["covered"] == 9
    assert spec.combined_file.exists() and not list(spec.data_dir.glob(".coverage.*"))
    spec.clear()  # what a new campaign in the same --out does first
    assert finish(spec, None, tmp_path)["files"][f"{PKG}/mod.py"]["covered"] == 0


def test_never_entered_lists_functions_whose_own_body_never_ran(probe_pkg):
    table = functions(probe_pkg / "mod.py")
    assert [(name, line) for name, line, _ in table] == [("first", 1), ("Box.second", 7), ("Box.second.inner", 8),
                                                         ("Box.never", 12)]
    own = {name: set(lines) for name, _, lines in table}
    assert own["Box.second"] == {8, 10}  # the nested def line, not the nested body
    assert own["Box.second.inner"] == {9}


def test_reachable_excludes_tooling_and_other_packages():
    assert reachable("torch/_dynamo/symbolic_convert.py")
    assert reachable("torch/_dynamo/variables/lists.py")
    assert not reachable("torch/_dynamo/repro/after_aot.py")
    assert not reachable("torch/_dynamo/backends/cudagraphs.py")
    assert not reachable("torch/_inductor/lowering.py")
    assert other_python_opcode("InstructionTranslatorBase.SETUP_LOOP")  # Python <= 3.7 only
    assert not other_python_opcode("InstructionTranslatorBase.LOAD_FAST")
    assert not other_python_opcode("GuardBuilder.TYPE_MATCH")  # not a bytecode handler


def test_package_dir_does_not_import(monkeypatch):
    assert package_dir("json") is not None and package_dir("no_such_package_zz") is None
    assert package_dir("json.decoder") is None  # a module, not a package
    monkeypatch.delitem(sys.modules, "email.mime", raising=False)
    assert package_dir("email.mime") is not None and "email.mime" not in sys.modules


def test_unknown_coverage_scope_is_a_one_line_usage_error(tmp_path, capsys):
    assert main(["fuzz", "--coverage-scope", "no_such_package_zz", "--cases", "1", "--no-db",
                 "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "no_such_package_zz" in err[0]


@pytest.mark.slow
def test_fuzz_coverage_writes_json_summary_block_and_never_entered(tmp_path, tmp_path_factory, monkeypatch):
    # One parse of torch/_dynamo per test session (and xdist worker), shared with test_guided's campaign.
    monkeypatch.setenv("DYNFUZZ_CACHE_DIR", str(tmp_path_factory.getbasetemp() / "dynfuzz-cache"))
    out = tmp_path / "out"
    assert main(["fuzz", "--coverage", "--cases", "4", "--workers", "1", "--family", "effects", "--no-db", "--no-minimize",
                 "--no-progress", "--out", str(out)]) == 0
    report = json.loads((out / "coverage.json").read_text())
    assert report["scopes"] == ["torch._dynamo"]
    assert report["totals"]["lines"] > 20_000 and 15 < report["totals"]["percent"] < 90
    assert report["reachable"]["percent"] > report["totals"]["percent"]
    convert = report["files"]["torch/_dynamo/symbolic_convert.py"]
    assert 0 < convert["covered"] < convert["lines"]
    never = report["never_entered"]
    assert "torch/_dynamo/side_effects.py" in never and "torch/_dynamo/variables/lists.py" in never
    assert "torch/_dynamo/utils.py" not in never
    assert any(name.startswith("InstructionTranslatorBase.") for name in never["torch/_dynamo/symbolic_convert.py"])
    block = json.loads((out / "summary.json").read_text())["coverage"]
    assert block["totals"] == report["totals"] and block["lines_traced"] > 0
    assert block["files"]["torch/_dynamo/symbolic_convert.py"][0] == convert["covered"]

