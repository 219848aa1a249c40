"""Every repro on every release: the outcome per release and a verdict per repro.

Note [Release outcomes and verdicts]
Each (repro, release) runs in a fresh process of that release's python. Its outcome is
- `reproduces`: it diverges with the signature it records (what `dynfuzz replay` calls still failing);
- `passes`: it agrees with eager (replay's FIXED);
- `differs`: it fails differently, with another signature (replay's CHANGED; its key on that release is kept);
- `n/a`: it needs an API the release lacks (a module, attribute or Dynamo setting), or a device absent here;
- `error`: dynfuzz could not judge it there (the probe died, timed out or raised).
`n/a` and `error` are never counted as a pass. Over the releases that decided (oldest first), the verdict is
`long-standing` (fails on every one), `changed` (fails on every one, differently on the newest),
`regression since R` (passes on an older release, fails from R on), `fixed in R` (fails on an older release,
passes from R on, the newest included), `not reproduced` (passes on every one), or `undecided`. The pass that
decides a verdict (the last pass before a regression, the first pass of a fix) is run `confirm` more times in
fresh processes; a run that fails turns it into a failure (intermittent) and the verdict is decided again.
"""
from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from dynfuzz.releases.environments import ReleaseEnv
from dynfuzz.releases.installer import version_key
from dynfuzz.releases.probe import MARK, missing_api
from dynfuzz.releases.repros import Repro

FAILING = ("reproduces", "differs")
DECIDED = ("reproduces", "differs", "passes")
CONFIRM_RUNS = 3
PROBE_TIMEOUT = 600.0


@dataclass
class Cell:
    """One repro on one release."""

    outcome: str
    key: str | None = None
    detail: str = ""
    runs: int = 1
    passed: int = 0  # runs that passed (a confirmed pass: all of them)

    def as_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"outcome": self.outcome, "key": self.key}
        if self.detail:
            out["detail"] = self.detail
        if self.runs > 1:
            out["runs"], out["passed"] = self.runs, self.passed
        return out


@dataclass
class Verdict:
    kind: str  # long-standing, changed, regression, fixed, not reproduced, undecided
    release: str | None = None  # regression since / fixed in this release
    deciding: str | None = None  # the release whose pass decides it
    previous: str | None = None  # the release before `release` that decided the other way

    @property
    def text(self) -> str:
        if self.kind == "regression":
            return f"regression since {self.release}"
        if self.kind == "fixed":
            return f"fixed in {self.release}"
        return self.kind


@dataclass
class Row:
    repro: Repro
    cells: dict[str, Cell]
    verdict: Verdict = field(default_factory=lambda: Verdict("undecided"))
    bisect: dict[str, Any] | None = None  # `bisect.narrow`'s record, with --bisect

    def as_json(self) -> dict[str, Any]:
        out = {"repro": str(self.repro.path), "name": self.repro.name, "verdict": self.verdict.text,
               "releases": {r: c.as_json() for r, c in self.cells.items()}}
        if self.bisect is not None:
            out["bisect"] = self.bisect
        return out


def decide(cells: dict[str, Cell]) -> Verdict:
    """The verdict over a repro's cells (Note [Release outcomes and verdicts])."""
    decided = [(r, c) for r, c in sorted(cells.items(), key=lambda rc: version_key(rc[0])) if c.outcome in DECIDED]
    if not decided:
        return Verdict("undecided")
    fails = [c.outcome in FAILING for _r, c in decided]
    if all(fails):
        return Verdict("changed" if decided[-1][1].outcome == "differs" else "long-standing")
    if not any(fails):
        return Verdict("not reproduced", deciding=decided[-1][0])
    if fails[-1]:
        i = max(k for k, f in enumerate(fails) if not f)
        return Verdict("regression", decided[i + 1][0], deciding=decided[i][0], previous=decided[i][0])
    i = max(k for k, f in enumerate(fails) if f)
    return Verdict("fixed", decided[i + 1][0], deciding=decided[i + 1][0], previous=decided[i][0])


def classify(repro: Repro, raw: dict[str, Any]) -> Cell:
    """A probe's result as an outcome for this repro (by signature, as replay decides)."""
    result, detail = raw.get("result"), raw.get("detail", "")
    if result == "agrees":
        return Cell("passes", passed=1)
    if result == "diverges":
        key = raw.get("key")
        if repro.signature:
            same = repro.signature in raw.get("signatures", [])
        else:
            same = repro.key is None or key == repro.key
        return Cell("reproduces" if same else "differs", key, "" if same else detail)
    return Cell("n/a" if result == "n/a" else "error", None, detail)


def child_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    """The environment a release's python runs in: this one, less what would point it at another install."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV")}
    env.update(extra or {})
    return env


def run_once(repro: Repro, python: str, timeout: float = PROBE_TIMEOUT, nice: int = 0) -> Cell:
    """Run `repro` once with `python`, in a fresh process (`nice`: lowered priority), and classify what
    happened."""
    path = repro.path.resolve()  # the process runs in the repro's folder
    cmd = [python, "-m", "dynfuzz.releases.probe", str(path)] if repro.judged else [python, str(path)]
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd=str(path.parent),
                              env=child_env(), preexec_fn=(lambda: os.nice(nice)) if nice else None)
    except subprocess.TimeoutExpired:
        if repro.meta.get("kind") == "hang":
            return Cell("reproduces", detail=f"still runs past {timeout:.0f} s")
        return Cell("error", detail=f"ran past {timeout:.0f} s")
    except OSError as e:
        return Cell("error", detail=f"cannot run {python}: {e.strerror}")
    if not repro.judged:
        return _script_cell(done)
    line = next((ln for ln in reversed(done.stdout.splitlines()) if ln.startswith(MARK)), None)
    if line is None:
        if done.returncode < 0 and (repro.meta.get("oracle"), repro.meta.get("kind")) == ("harness", "crash"):
            return Cell("reproduces", detail=f"the process died (signal {-done.returncode})")
        last = (done.stderr.strip().splitlines() or ["no output"])[-1][:300]
        return Cell("error", detail=f"probe exited {done.returncode}: {last}")
    return classify(repro, json.loads(line[len(MARK):]))


def _script_cell(done: subprocess.CompletedProcess) -> Cell:
    if done.returncode == 0:
        return Cell("passes", passed=1)
    lacking = missing_api(done.stderr)
    if lacking:
        return Cell("n/a", detail=f"no {lacking}")
    if done.returncode == 1:
        return Cell("reproduces")
    return Cell("error", detail=f"exited {done.returncode}")


Runner = Callable[[Repro, str], Cell]


def run_matrix(repros: list[Repro], envs: dict[str, ReleaseEnv], jobs: int = 1, confirm: int = CONFIRM_RUNS,
               runner: Runner = run_once, progress: Callable[[str], None] | None = None) -> list[Row]:
    """Run every repro on every release (`jobs` at a time), decide each verdict, confirm deciding passes;
    `progress` hears about every tenth run done."""
    releases = sorted(envs, key=version_key)
    pairs = [(r, rel) for r in repros for rel in releases]
    done = [0]

    def run(pair: tuple[Repro, str]) -> Cell:
        cell = runner(pair[0], envs[pair[1]].python)
        done[0] += 1
        if progress is not None and (done[0] % 10 == 0 or done[0] == len(pairs)):
            progress(f"releases: {done[0]} of {len(pairs)} runs done")
        return cell

    with ThreadPoolExecutor(max(1, jobs)) as pool:
        cells = list(pool.map(run, pairs))
        rows = [Row(r, {}) for r in repros]
        by_repro = {id(r): row for r, row in zip(repros, rows)}
        for (repro, rel), cell in zip(pairs, cells):
            by_repro[id(repro)].cells[rel] = cell
        settle(rows, lambda repro, rel: envs[rel].python, pool, confirm, runner)
    return rows


def settle(rows: list[Row], python_of: Callable[[Repro, str], str], pool: ThreadPoolExecutor, confirm: int,
           runner: Runner = run_once) -> None:
    """Decide every row's verdict, confirming the pass each one rests on until all rest on confirmed passes."""
    while True:
        pending = []
        for row in rows:
            row.verdict = decide(row.cells)
            rel = row.verdict.deciding
            if rel is not None and confirm > 0 and row.cells[rel].runs == 1:
                pending.append((row, rel))
        if not pending:
            return
        jobs = [(row, rel, k) for row, rel in pending for k in range(confirm)]
        results = list(pool.map(lambda j: runner(j[0].repro, python_of(j[0].repro, j[1])), jobs))
        for row, rel in pending:
            more = [c for (r, rr, _k), c in zip(jobs, results) if r is row and rr == rel]
            row.cells[rel] = confirmed(row.cells[rel], more)


def confirmed(first: Cell, more: list[Cell]) -> Cell:
    """A pass re-run: still a pass when every run passed, else the first other outcome (noted as intermittent)."""
    runs = [first, *more]
    passed = sum(1 for c in runs if c.outcome == "passes")
    if passed == len(runs):
        return Cell("passes", runs=len(runs), passed=passed, detail=f"passed {passed} of {len(runs)} runs")
    other = next(c for c in runs if c.outcome != "passes")
    return Cell(other.outcome, other.key, f"passed {passed} of {len(runs)} runs; otherwise: "
                f"{other.detail or other.outcome}", runs=len(runs), passed=passed)


def tally(rows: list[Row]) -> str:
    """One line: how many repros got each verdict, regressions and fixes by release."""
    from collections import Counter

    kinds = Counter(row.verdict.kind for row in rows)
    parts = []
    for kind in ("long-standing", "regression", "fixed", "changed", "not reproduced", "undecided"):
        if not kinds[kind]:
            continue
        part = f"{kinds[kind]} {kind}"
        if kind in ("regression", "fixed"):
            by = Counter(row.verdict.release for row in rows if row.verdict.kind == kind)
            word = "since" if kind == "regression" else "in"
            part += " (" + ", ".join(f"{word} {r}: {n}" for r, n in sorted(by.items(), key=lambda x: version_key(
                x[0]))) + ")"
        parts.append(part)
    return f"{len(rows)} repro(s): " + ", ".join(parts)


def format_table(rows: list[Row], releases: list[str], builds: dict[str, str] | None = None) -> str:
    """The matrix as text: one row per repro, one column per release, the verdict; then the notes."""
    releases = sorted(releases, key=version_key)
    table = [["repro", *releases, "verdict"]]
    for row in rows:
        verdict = row.verdict.text + (" (bisected)" if row.bisect else "")
        table.append([row.repro.name, *[row.cells[r].outcome if r in row.cells else "-" for r in releases], verdict])
    widths = [max(len(line[i]) for line in table) for i in range(len(table[0]))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(line, widths)).rstrip() for line in table]
    lines.insert(1, "  ".join("-" * w for w in widths))
    if builds:
        lines.append("builds: " + ", ".join(f"{r} = {builds[r]}" for r in releases if r in builds))
    for row in rows:
        for rel in releases:
            cell = row.cells.get(rel)
            if cell is None or (cell.outcome == "reproduces" and not cell.detail):
                continue
            if cell.outcome == "differs":
                lines.append(f"{row.repro.name} on {rel}: fails differently: {cell.key or cell.detail}")
            elif cell.outcome in ("n/a", "error") or cell.runs > 1:
                lines.append(f"{row.repro.name} on {rel}: {cell.outcome}: {cell.detail}")
        if row.bisect:
            low, high = row.bisect["between"]
            tried = ", ".join(f"{r} {o}" for r, o in sorted(row.bisect["tried"].items(), key=lambda x: version_key(
                x[0]))) or "no release in between"
            lines.append(f"{row.repro.name}: bisected to {low} .. {high} ({tried})")
    lines.append(tally(rows))
    return "\n".join(lines)
