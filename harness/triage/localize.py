"""Where in torch a silent divergence lives: spectrum-based fault localization of a minimized program.

A wrong value, effect or gradient has no stack to key by. So the minimized failing program and its passing
neighbours (the ablations explanation tried, else the reducer's one-edit neighbours, that run eagerly and no
longer diverge) each run in a fresh process under line coverage of torch (`triage/spectrum.py`), and every
function of torch the failing runs reached gets an Ochiai score: `failing(f) / sqrt(F * (failing(f) +
passing(f)))`, where `failing(f)`/`passing(f)` count the failing/passing runs that reached `f` and `F` the
failing runs. Functions are ranked by score, then by fewer passing runs, then by name, so the ranking is
deterministic. The top suspect enters the bucket key (` near <file>:<function>`) only when its score leads
the next one's by `MARGIN`, and only from enough runs (`MIN_FAILING`, `MIN_PASSING`); the first `SHOWN`
suspects go into report.md as "where to look" either way.

It runs as the lowest-priority triage job: a bucket is `ok` without it and is re-keyed when it arrives. It
is bounded by judge calls and program runs, never by seconds, so the locus does not depend on machine speed.
"""
from __future__ import annotations

import ast
import json
import math
import os
import pickle
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field, replace
from functools import cache
from pathlib import Path
from typing import Any

from dynfuzz.generators.case import Case
from dynfuzz.oracles import Finding
from dynfuzz.run.compilers import CompileSpec, make_compiler
from dynfuzz.run.judge import judge
from dynfuzz.triage.buckets import divergence_class, tier_of

MARGIN = 0.15  # the lead over the second suspect a locus needs to enter the key
# With one failing run, every function only that run reached scores 1.0: code of the construct itself (a
# guard on a set's contents, say) that the passing neighbours lost with it, not the fault. So a locus enters
# the key only from at least two failing runs (the program and a failing neighbour) and three passing ones.
MIN_FAILING, MIN_PASSING = 2, 3
SHOWN = 5
MAX_JUDGE_CALLS = 24  # candidate neighbours judged in this process
MAX_PASSING = 8  # passing neighbours run under coverage
MAX_FAILING = 3  # failing runs under coverage (the program itself and failing neighbours)
RUN_TIMEOUT = 180.0


@dataclass
class Localization:
    """The ranked suspects of one minimized program, and the locus the key names (None: no clear leader)."""

    suspects: list[dict[str, Any]] = field(default_factory=list)  # function, score, failing, passing, lines
    locus: str | None = None
    failing: int = 0
    passing: int = 0
    seconds: float = 0.0


def wants_localization(explanation: Any) -> bool:
    """Silent divergences only: a crash is keyed by its frame already."""
    return tier_of(explanation.cls) == "miscompile"


def _candidates(case: Case) -> list[str]:
    """Ablations of every named construct first, then one-edit neighbours from the reducer's passes."""
    import ast as _ast

    from dynfuzz.triage.constructs import classify
    from dynfuzz.triage.reduce import delete_statements, shrink_literals, simplify_expressions

    seen, out = {case.source}, []
    for c in classify(case.source, case.entry):
        text = c.ablate(case.source)
        if text and text not in seen:
            seen.add(text)
            out.append(text)
    tree = _ast.parse(case.source)
    for make in (delete_statements, simplify_expressions, shrink_literals):
        for candidate in make(tree, case.entry):
            text = _ast.unparse(_ast.fix_missing_locations(candidate)) + "\n"
            if text not in seen:
                seen.add(text)
                out.append(text)
    return out


def neighbours(case: Case, finding: Finding, spec: CompileSpec) -> tuple[list[Case], list[Case]]:
    """(failing, passing) one-edit variants of `case`, judged here: failing ones show the same oracle and class,
    passing ones run eagerly without error and show no finding of that oracle and class."""
    from dynfuzz.triage.minimize import CANDIDATE_SECONDS, time_limit

    compiler = make_compiler(spec)
    cls = divergence_class(finding)
    failing, passing = [], []
    for text in _candidates(case)[:MAX_JUDGE_CALLS]:
        variant = replace(case, source=text, eager_source=None, choices=())
        try:
            with time_limit(CANDIDATE_SECONDS):
                result = judge(variant, compiler, spec, only=(finding.oracle,))
        except Exception:  # a variant that breaks or runs too long says nothing
            continue
        if not result.eager_ok:
            continue
        if any(f.oracle == finding.oracle and divergence_class(f) == cls for f in result.findings):
            failing.append(variant)
        elif not result.findings:
            passing.append(variant)
    return failing[:MAX_FAILING - 1], passing[:MAX_PASSING]


def spectrum(case: Case, spec: CompileSpec) -> dict[str, Any] | None:
    """The lines of torch the compiled side of `case` ran, measured in a fresh process (None if it failed)."""
    with tempfile.TemporaryDirectory(prefix="dynfuzz-spectrum-") as tmp:
        job, out = Path(tmp) / "job.pkl", Path(tmp) / "out.json"
        job.write_bytes(pickle.dumps((replace(case, choices=()), spec)))
        try:
            subprocess.run([sys.executable, "-m", "dynfuzz.triage.spectrum", str(job), str(out)],
                           capture_output=True, timeout=RUN_TIMEOUT, check=False)
        except subprocess.TimeoutExpired:
            return None
        return json.loads(out.read_text()) if out.exists() else None


@cache
def _functions(path: str) -> dict[int, str]:
    """Line -> qualified function name for one source file of torch."""
    import torch

    try:
        tree = ast.parse(Path(os.path.dirname(torch.__file__), path.removeprefix("torch/")).read_text())
    except (OSError, SyntaxError, ValueError):
        return {}
    table: dict[int, str] = {}

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                name = prefix + child.name
                if not isinstance(child, ast.ClassDef):
                    for line in range(child.lineno, (child.end_lineno or child.lineno) + 1):
                        table[line] = name
                visit(child, name + ".")
            else:
                visit(child, prefix)
    visit(tree, "")
    return table


def functions_reached(lines: dict[str, list[int]]) -> dict[str, set[int]]:
    """`torch/<file>.py:<function>` -> the lines of it that ran (module-level lines are left out)."""
    out: dict[str, set[int]] = {}
    for path, numbers in lines.items():
        table = _functions(path)
        for n in numbers:
            fn = table.get(n)
            if fn is not None:
                out.setdefault(f"{path}:{fn}", set()).add(n)
    return out


def rank(failing: list[dict[str, set[int]]], passing: list[dict[str, set[int]]]) -> list[dict[str, Any]]:
    """Ochiai over functions, highest first; ties: fewer passing runs, more failing runs, then the name."""
    total = len(failing)
    reached = set().union(*failing) if failing else set()
    rows = []
    for fn in reached:
        ef = sum(fn in run for run in failing)
        ep = sum(fn in run for run in passing)
        score = ef / math.sqrt(total * (ef + ep)) if ef else 0.0
        lines = sorted(set().union(*(run[fn] for run in failing if fn in run)))
        rows.append({"function": fn, "score": round(score, 4), "failing": ef, "passing": ep, "lines": lines})
    rows.sort(key=lambda r: (-r["score"], r["passing"], -r["failing"], r["function"]))
    return rows


def locus_of(ranked: list[dict[str, Any]], margin: float = MARGIN) -> str | None:
    """The top suspect when it leads the second by `margin` (and some passing run exists to compare with)."""
    if not ranked:
        return None
    second = ranked[1]["score"] if len(ranked) > 1 else 0.0
    return ranked[0]["function"] if ranked[0]["score"] - second >= margin else None


def localize(case: Case, finding: Finding, spec: CompileSpec) -> Localization:
    """Rank the functions of torch for the divergence `finding` of the minimized `case` (see the module doc)."""
    start = time.monotonic()
    failing_cases, passing_cases = neighbours(case, finding, spec)
    cls = divergence_class(finding)
    failing, passing = [], []
    for variant, want_fail in [(case, True)] + [(c, True) for c in failing_cases] + [(c, False) for c in passing_cases]:
        run = spectrum(variant, spec)
        if run is None or not run["eager_ok"]:
            continue
        fails = [finding.oracle, cls] in run["findings"]
        if fails != want_fail:  # another process disagrees with this one: the variant says nothing either way
            continue
        (failing if fails else passing).append(functions_reached(run["lines"]))
    if not failing or not passing:
        return Localization(failing=len(failing), passing=len(passing), seconds=time.monotonic() - start)
    ranked = rank(failing, passing)
    shown = [{**r, "lines": r["lines"][:20]} for r in ranked[:SHOWN]]
    enough = len(failing) >= MIN_FAILING and len(passing) >= MIN_PASSING
    return Localization(shown, locus_of(ranked) if enough else None, len(failing), len(passing),
                        time.monotonic() - start)
