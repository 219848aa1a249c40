"""Line coverage of Dynamo's own code (`--coverage`): measured per worker with coverage.py, merged at the end.

Each process that runs cases (every spawned worker, or the campaign itself with `--workers 0`) starts a
`Collector` before it imports torch, so module-level lines count too. After every case the collector
hands back the lines that this process reached for the first time (`CaseResult.coverage`); the parent
keeps their union (`Tracker`, which `--guided` also steers by). At the end each worker saves a
coverage.py data file under `OUT/coverage/`, and `coverage_report.finish()` combines them, adds the union
(which still holds what a worker killed by a crash or a hang had reached), and writes `OUT/coverage.json`: per file
statements, covered, percent; totals; the "reachable" part of torch/_dynamo; and, for the files where
front-end bugs live, the functions never entered. `OUT/coverage/.coverage` is an ordinary coverage.py
data file (`coverage html --data-file OUT/coverage/.coverage`).

On Python 3.12+ coverage.py's `sys.monitoring` core is used (each line reports once, then is disabled);
on 3.11 its C tracer. (Tracing only the compiled calls, starting and stopping the tracer around each one,
was tried: it missed about one point of torch/_dynamo and was no faster, 1.39x plain against 1.25x for
tracing everything over the same 250 cases.)
"""
from __future__ import annotations

import importlib.util
import os
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

DEFAULT_SCOPES = ("torch._dynamo",)

# Where front-end bugs live: functions never entered are listed for these (paths inside torch/_dynamo).
FRONTEND = ("symbolic_convert.py", "side_effects.py", "guards.py", "variables/", "output_graph.py",
            "bytecode_transformation.py")

# Also out of reach: handlers of opcodes this Python does not have (`other_python_opcode`).
# Out of reach by design for a single-process CPU fuzzer of the front end with the eager/aot_eager/inductor
# backends: minifier and repro tooling, backends other than the registry and the debugging (eager) ones,
# distributed, test utilities, packaging/precompile, profilers and debuggers. (Compiled autograd, optimizers,
# export and graph deduplication were on this list until the `autograd-backward`, `optimizer-step` and
# `export` fragments and the `config-graph-deduplication` setting reached them.)
OUT_OF_REACH = ("repro/", "backends/cudagraphs.py", "backends/distributed.py", "backends/onnxrt.py",
                "backends/tensorrt.py", "backends/torchxla.py", "backends/tvm.py", "backends/inductor.py",
                "backends/huggingface.py", "distributed.py", "variables/distributed.py",
                "test_case.py", "test_minifier_common.py", "testing.py", "bytecode_debugger.py", "debug_utils.py",
                "package.py", "precompile_context.py", "aot_compile.py", "aot_compile_types.py",
                "dynamo_profiler.py", "profiler.py", "comptime.py",
                "variables/script_object.py", "variables/streams.py", "device_interface.py", "replay_record.py",
                "_trace_wrapped_higher_order_op.py",
                "variables/sdpa.py", "create_parameter_op.py", "polyfills/fx.py", "polyfills/os.py",
                "polyfills/sys.py", "polyfills/struct.py", "polyfills/torch_c_nn.py", "dce_extra_outputs.py")


@dataclass(frozen=True)
class CoverageSpec:
    """What to measure (`scopes`: dotted package names) and where the per-process data files go."""

    data_dir: Path
    scopes: tuple[str, ...] = DEFAULT_SCOPES

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

    def save(self) -> None:
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
