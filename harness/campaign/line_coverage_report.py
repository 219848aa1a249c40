"""Coverage's report: the workers' data merged into `OUT/coverage.json` (per file, totals, the reachable part of
torch/_dynamo, functions never entered), the summary.json block and the end-of-run table.

Measurement (what runs in the workers) is in `coverage.py`; this module only reads its data files.
"""
from __future__ import annotations

import ast
import dis
import json
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from dynfuzz.campaign.line_coverage import FRONTEND, OUT_OF_REACH, CoverageSpec, Tracker, core_name, package_dir


def finish(spec: CoverageSpec, tracker: Tracker | None, out: Path, late: Iterable[str] = ()) -> dict[str, Any]:
    """Combine the workers' data files and the tracker's union, write `out/coverage.json`, return it.

    `late`: packages measured only after they were imported (their module-level lines count as missed)."""
    import coverage

    cov = coverage.Coverage(data_file=str(spec.combined_file), source=spec.folders(), config_file=False)
    cov.set_option("run:disable_warnings", ["no-data-collected", "couldnt-parse"])
    spec.data_dir.mkdir(parents=True, exist_ok=True)
    if spec.combined_file.exists():
        cov.load()  # an earlier merge of the same run (its union is added again below)
    parts = [str(p) for p in spec.data_dir.glob(".coverage.*")]
    if parts:
        cov.combine(parts, keep=False)
    data = cov.get_data()
    if tracker is not None and tracker.lines:
        data.add_lines({path: sorted(lines) for path, lines in tracker.lines.items()})
    cov.save()
    executed = {os.path.realpath(p): set(data.lines(p) or ()) for p in data.measured_files()}
    with StaticCache(cov) as static:
        report = _report(spec, executed, static)
    report["imported_before_measuring"] = list(late)
    (out / "coverage.json").write_text(json.dumps(report, indent=1) + "\n")
    return report


class StaticCache:
    """What coverage needs to know of a source file without running it (its statements, which lines belong to
    a multi-line statement, its functions), parsed once per file version and kept in the user's cache:
    parsing the ~120k lines of torch/_dynamo takes 5-10 s."""

    def __init__(self, cov) -> None:
        import coverage

        self.cov = cov
        root = Path(os.environ.get("DYNFUZZ_CACHE_DIR") or Path.home() / ".cache" / "dynfuzz")
        self.path = root / f"coverage-static-{coverage.__version__}.json"
        try:
            self.entries: dict[str, Any] = json.loads(self.path.read_text())
        except (OSError, ValueError):
            self.entries = {}
        self.dirty = False

    def __enter__(self) -> StaticCache:
        return self

    def __exit__(self, *exc) -> None:
        if self.dirty:
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                tmp = self.path.with_suffix(f".{os.getpid()}.tmp")
                tmp.write_text(json.dumps(self.entries))
                tmp.replace(self.path)
            except OSError:
                pass  # a read-only home: parse again next time

    def get(self, path: Path) -> dict[str, Any] | None:
        """`{"statements": [...], "remap": {line: first line}, "functions": [[name, line, [own lines]]]}`."""
        from coverage.python import PythonFileReporter

        st = path.stat()
        key = str(path)
        stamp = [st.st_mtime_ns, st.st_size]
        entry = self.entries.get(key)
        if entry is not None and entry.get("stamp") == stamp:
            return entry
        try:
            reporter = PythonFileReporter(str(path), coverage=self.cov)
            statements = sorted(reporter.lines())
            remap = {str(k): v for k, v in reporter.multiline_map().items() if k != v}
        except Exception:  # coverage.py could not parse it (e.g. a template): nothing to count
            entry = {"stamp": stamp, "statements": [], "remap": {}, "functions": []}
        else:
            entry = {"stamp": stamp, "statements": statements, "remap": remap, "functions": functions(path)}
        self.entries[key] = entry
        self.dirty = True
        return entry


def _report(spec: CoverageSpec, executed: dict[str, set[int]], static: StaticCache) -> dict[str, Any]:
    files: dict[str, dict[str, Any]] = {}
    never: dict[str, list[str]] = {}
    for scope in spec.scopes:
        root = package_dir(scope)
        if root is None:
            continue
        prefix = scope.replace(".", "/")
        for path in sorted(root.rglob("*.py")):
            entry = static.get(path)
            if not entry or not entry["statements"]:
                continue
            remap = entry["remap"]
            ran = {remap.get(str(line), line) for line in executed.get(os.path.realpath(path), ())}
            covered = len(ran.intersection(entry["statements"]))
            rel = f"{prefix}/{path.relative_to(root).as_posix()}"
            files[rel] = {"lines": len(entry["statements"]), "covered": covered,
                          "percent": round(100.0 * covered / len(entry["statements"]), 2)}
            inner = rel[len("torch/_dynamo/"):] if rel.startswith("torch/_dynamo/") else None
            if inner is None:
                continue
            foreign = [(name, line, own) for name, line, own in entry["functions"] if other_python_opcode(name)]
            unreachable = set().union(*(own for _, _, own in foreign)).intersection(entry["statements"]) - ran
            files[rel]["other_python"] = len(unreachable)
            if inner.startswith(FRONTEND):
                never[rel] = [f"{name}:{line}" for name, line, own in entry["functions"]
                              if not ran.intersection(own) and not other_python_opcode(name)]
    return {
        "scopes": list(spec.scopes),
        "core": core_name(),
        "totals": _totals(files.values()),
        "reachable": {**_totals(({**v, "lines": v["lines"] - v.get("other_python", 0)}
                                 for k, v in files.items() if reachable(k))),
                      "excluded": list(OUT_OF_REACH),
                      "other_python_statements": sum(v.get("other_python", 0) for k, v in files.items()
                                                     if reachable(k))}
        if any(k.startswith("torch/_dynamo/") for k in files) else None,
        "files": files,
        "never_entered": never,
    }


def other_python_opcode(qualname: str) -> bool:
    """A bytecode handler (`InstructionTranslatorBase.SETUP_LOOP`) for an opcode this Python does not have:
    unreachable here, so it is neither "never entered" nor part of the reachable statements."""
    owner, _, name = qualname.rpartition(".")
    return "Translator" in owner and name.isupper() and name.replace("_", "").isalnum() and name not in dis.opmap


def reachable(rel: str) -> bool:
    """Whether a torch/_dynamo file is in the part a front-end fuzzer can reach (see OUT_OF_REACH)."""
    if not rel.startswith("torch/_dynamo/"):
        return False
    return not rel[len("torch/_dynamo/"):].startswith(OUT_OF_REACH)


def _totals(rows: Iterable[dict[str, Any]]) -> dict[str, Any]:
    rows = list(rows)
    lines = sum(r["lines"] for r in rows)
    covered = sum(r["covered"] for r in rows)
    return {"files": len(rows), "lines": lines, "covered": covered,
            "percent": round(100.0 * covered / lines, 2) if lines else 0.0}


def functions(path: Path) -> list[tuple[str, int, list[int]]]:
    """Every function in `path` as `(Qualified.name, def line, lines of its own body's statements)`."""
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"))
    except (OSError, SyntaxError, ValueError):
        return []
    out: list[tuple[str, int, list[int]]] = []

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                name = f"{prefix}{child.name}"
                out.append((name, child.lineno, sorted(_own_lines(child))))
                visit(child, name + ".")
            elif isinstance(child, ast.ClassDef):
                visit(child, f"{prefix}{child.name}.")
            else:
                visit(child, prefix)

    visit(tree, "")
    return out


def _own_lines(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> set[int]:
    """Line numbers of the statements in a function's body, not counting nested functions and classes."""
    lines: set[int] = set()
    stack: list[ast.AST] = list(fn.body)
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            lines.add(node.lineno)  # the `def` line itself runs in the enclosing body
            continue
        if isinstance(node, ast.stmt):
            lines.add(node.lineno)
        stack.extend(ast.iter_child_nodes(node))
    return lines


def summary_block(report: dict[str, Any], overhead: dict[str, Any] | None = None) -> dict[str, Any]:
    """The `coverage` block of summary.json: totals, the reachable part, per-file table, never-entered counts."""
    return {
        "scopes": report["scopes"],
        "core": report["core"],
        "totals": report["totals"],
        "reachable": report["reachable"] and {k: v for k, v in report["reachable"].items() if k != "excluded"},
        "files": {k: [v["covered"], v["lines"], v["percent"]] for k, v in report["files"].items()},
        "never_entered_counts": {k: len(v) for k, v in report["never_entered"].items()},
        "imported_before_measuring": report.get("imported_before_measuring", []),
        "file": "coverage.json",
        **(overhead or {}),
    }


def format_table(report: dict[str, Any], limit: int = 40) -> str:
    """A plain-text per-file table (largest files first), the totals and the reachable part."""
    rows = sorted(report["files"].items(), key=lambda kv: -kv[1]["lines"])
    width = max([len(k) for k, _ in rows[:limit]] + [10])
    out = [f"{'file':<{width}}  {'lines':>6}  {'covered':>7}  {'%':>6}"]
    for rel, r in rows[:limit]:
        out.append(f"{rel:<{width}}  {r['lines']:>6}  {r['covered']:>7}  {r['percent']:>6.1f}")
    if len(rows) > limit:
        out.append(f"... {len(rows) - limit} smaller files in coverage.json")
    t = report["totals"]
    if report.get("imported_before_measuring"):
        out.append(f"note: {', '.join(report['imported_before_measuring'])} was imported before measuring began "
                   "(--workers 0): its module-level lines count as missed")
    out.append(f"{'TOTAL':<{width}}  {t['lines']:>6}  {t['covered']:>7}  {t['percent']:>6.1f}")
    if report.get("reachable"):
        r = report["reachable"]
        out.append(f"{'reachable part of torch/_dynamo':<{width}}  {r['lines']:>6}  {r['covered']:>7}  "
                   f"{r['percent']:>6.1f}")
    return "\n".join(out)
