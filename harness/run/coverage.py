"""Line coverage of Dynamo's own code (`--coverage`): measured per worker with coverage.py, merged at the end.

Each process that runs cases (every spawned worker, or the campaign itself with `--workers 0`) starts a
`Collector` before it imports torch, so module-level lines count too. After every case the collector
hands back the lines that this process reached for the first time (`CaseResult.coverage`); the parent
keeps their union (`Tracker`, which `--guided` also steers by). At the end each worker saves a
coverage.py data file under `OUT/coverage/`, and `finish()` combines them, adds the union (which still
holds what a worker killed by a crash or a hang had reached), and writes `OUT/coverage.json`: per file
statements, covered, percent; totals; the "reachable" part of torch/_dynamo; and, for the files where
front-end bugs live, the functions never entered. `OUT/coverage/.coverage` is an ordinary coverage.py
data file (`coverage html --data-file OUT/coverage/.coverage`).

Note [Measuring only the compiled calls]
A line tracer on Python 3.11 slows every line the worker runs, Dynamo's or not (a loop in an unmeasured file
runs 2.7x slower under coverage.py's C tracer). Dynamo's lines run while a compiled call compiles, guards
and runs; the eager runs, snapshots and oracles around it are the harness's and plain torch's. So by default
(`phases="compiled"`) a worker traces its start-up (module-level lines), then only inside compiled calls
(`execute.measure_compiled_calls`); lines of torch/_dynamo that only eager code reaches (an eager
`torch.cond`, say) are then missed. `--coverage-phases all` traces everything.

On Python 3.12+ coverage.py's `sys.monitoring` core is used (each line reports once, then is disabled);
on 3.11 its C tracer.
"""
from __future__ import annotations

import ast
import dis
import importlib.util
import json
import os
import sys
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

DEFAULT_SCOPES = ("torch._dynamo",)

# Where front-end bugs live: functions never entered are listed for these (paths inside torch/_dynamo).
FRONTEND = ("symbolic_convert.py", "side_effects.py", "guards.py", "variables/", "output_graph.py",
            "bytecode_transformation.py")

# Also out of reach: handlers of opcodes this Python does not have (`other_python_opcode`).
# Out of reach by design for a single-process CPU fuzzer of the front end with the eager/aot_eager/inductor
# backends: minifier and repro tooling, backends other than the registry and the debugging (eager) ones,
# distributed, compiled autograd, test utilities, export/packaging/precompile, profilers and debuggers.
OUT_OF_REACH = ("repro/", "backends/cudagraphs.py", "backends/distributed.py", "backends/onnxrt.py",
                "backends/tensorrt.py", "backends/torchxla.py", "backends/tvm.py", "backends/inductor.py",
                "backends/huggingface.py", "distributed.py", "variables/distributed.py", "compiled_autograd.py",
                "test_case.py", "test_minifier_common.py", "testing.py", "bytecode_debugger.py", "debug_utils.py",
                "package.py", "precompile_context.py", "aot_compile.py", "aot_compile_types.py",
                "functional_export.py", "dynamo_profiler.py", "profiler.py", "comptime.py", "variables/optimizer.py",
                "variables/script_object.py", "variables/streams.py", "device_interface.py", "replay_record.py",
                "graph_deduplication.py", "graph_region_tracker.py", "_trace_wrapped_higher_order_op.py",
                "variables/sdpa.py", "create_parameter_op.py", "polyfills/fx.py", "polyfills/os.py",
                "polyfills/sys.py", "polyfills/struct.py", "polyfills/torch_c_nn.py", "dce_extra_outputs.py")


@dataclass(frozen=True)
class CoverageSpec:
    """What to measure (`scopes`: dotted package names) and where the per-process data files go."""

    data_dir: Path
    scopes: tuple[str, ...] = DEFAULT_SCOPES
    # "compiled": after start-up, trace only the compiled calls (Note [Measuring only the compiled calls]);
    # "all": every line the worker runs, the eager runs, snapshots and oracles included.
    phases: str = "compiled"

    @property
    def combined_file(self) -> Path:
        return self.data_dir / ".coverage"

    def clear(self) -> None:
        """Remove the data files of an earlier campaign in the same folder."""
        for path in self.data_dir.glob(".coverage*"):
            path.unlink(missing_ok=True)

    def folders(self) -> list[str]:
        return [str(folder) for folder in map(package_dir, self.scopes) if folder is not None]


def core_name() -> str:
    """coverage.py's measurement core: `sysmon` where Python has sys.monitoring (3.12+), else `ctrace`."""
    return "sysmon" if sys.version_info >= (3, 12) else "ctrace"


class Collector:
    """coverage.py running in this process, with the lines first reached since the last `new_lines()`."""

    def __init__(self, spec: CoverageSpec, name: str) -> None:
        import coverage

        spec.data_dir.mkdir(parents=True, exist_ok=True)
        # Folders, not `source_pkgs`: coverage.py 7.17's module-name matching made `import torch` fail under
        # measurement ("SystemError: ... bad call flags") on Python 3.11.
        self.cov = coverage.Coverage(data_file=str(spec.combined_file), data_suffix=f"{name}.{os.getpid()}",
                                     source=spec.folders(), config_file=False, branch=False)
        self.cov.set_option("run:core", core_name())
        self.cov.set_option("run:disable_warnings", ["module-not-imported", "no-data-collected",
                                                     "module-not-measured", "already-imported", "include-ignored"])
        self.spec = spec
        self.seen: dict[str, set[int]] = {}
        self.sizes: dict[str, int] = {}
        # Packages already imported (in-process runs): their module-level lines ran unmeasured.
        self.late = [scope for scope in spec.scopes if scope in sys.modules]
        self.cov.start()

    def new_lines(self) -> dict[str, list[int]]:
        """Lines of the measured packages this process reached for the first time since the last call."""
        out: dict[str, list[int]] = {}
        for path, lines in self._lines().items():
            if self.sizes.get(path) == len(lines):
                continue
            seen = self.seen.setdefault(path, set())
            fresh = set(lines) - seen
            if fresh:
                seen |= fresh
                out[path] = sorted(fresh)
            self.sizes[path] = len(lines)
        return out

    def _lines(self) -> dict[str, Iterable[int]]:
        # Fast path: the collector's live per-file line sets (a private attribute, cumulative until the
        # data is flushed at save). Fallback: the public API, which flushes into SQLite (about 50 ms a case).
        live = getattr(getattr(self.cov, "_collector", None), "data", None)
        if isinstance(live, dict) and all(isinstance(v, set) for v in live.values()):
            return dict(live)
        data = self.cov.get_data()
        self.sizes.clear()
        return {path: data.lines(path) or () for path in data.measured_files()}

    def measure_compiled_calls_only(self) -> None:
        """Stop tracing until `execute` runs a compiled call (`measuring`), when the spec asks for that."""
        if self.spec.phases == "compiled":
            from dynfuzz.run import execute

            self.cov.stop()
            execute.measure_compiled_calls(self.measuring)

    @contextmanager
    def measuring(self) -> Iterator[None]:
        """Trace while the block runs (a start/stop pair costs about 15 us; the line data stays live)."""
        self.cov.start()
        try:
            yield
        finally:
            self.cov.stop()

    def save(self) -> None:
        """Stop measuring for good (compiled calls of this process are no longer traced) and write the data."""
        from contextlib import nullcontext

        from dynfuzz.run import execute

        execute.measure_compiled_calls(nullcontext)
        self.cov.stop()
        self.cov.save()


class Tracker:
    """The campaign's running union of lines reached, fed with each case's first-reached lines."""

    def __init__(self, spec: CoverageSpec) -> None:
        self.spec = spec
        self.lines: dict[str, set[int]] = {}
        self.total = 0

    def add(self, fresh: dict[str, list[int]] | None) -> int:
        """Merge one case's lines; return how many of them no process of the campaign had reached before."""
        new = 0
        for path, lines in (fresh or {}).items():
            known = self.lines.setdefault(path, set())
            before = len(known)
            known.update(lines)
            new += len(known) - before
        self.total += new
        return new


def package_dir(scope: str) -> Path | None:
    """The folder of a dotted package name, found without importing it or its parents (a worker resolves
    it before torch is imported, so that torch's own start-up is measured too)."""
    top, *rest = scope.split(".")
    try:
        found = importlib.util.find_spec(top)
    except (ImportError, ValueError):
        return None
    if found is None or not found.submodule_search_locations:
        return None
    folder = Path(next(iter(found.submodule_search_locations))).joinpath(*rest)
    return folder if (folder / "__init__.py").is_file() else None


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
