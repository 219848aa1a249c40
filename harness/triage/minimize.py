"""`dynfuzz minimize`: shrink a failing program toward the same failure, in two stages.

Stage 1 re-runs Hypothesis's shrinker on the choice sequence that drew the
program (generated cases only); stage 2 reduces the rendered source with
`harness.reduce`. Both accept a smaller program only when the same signature
(so the same oracle) reappears and eager still behaves as it did. The result
is a short repro (`dynfuzz.triage.repro`): the program, the compile call, the oracle's check.
"""
from __future__ import annotations

import re
import signal
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path

from dynfuzz.errors import UsageError
from dynfuzz.generators.case import Case, case_from_program, draw_case
from dynfuzz.oracles import Finding
from dynfuzz.run.compilers import Compiler, CompileSpec, make_compiler
from dynfuzz.run.judge import judge
from dynfuzz.triage.phases import Phases
from dynfuzz.triage.reduce import ReduceStats, reduce_source
from dynfuzz.triage.repro import SavedProgram, write_minimized
from dynfuzz.triage.repro_twin import cond_as_if, derives_twin


@dataclass(frozen=True)
class Target:
    """The failure being preserved: its signature, and whether eager ran cleanly when it appeared."""

    signature: str
    eager_ok: bool
    oracle: str | None = None  # the oracle that found it: candidates are judged by it alone


@dataclass
class Minimized:
    case: Case
    finding: Finding
    seconds: float
    original_lines: int
    stage1: bool = False
    reduce: ReduceStats | None = None
    timed_out: bool = False  # the seconds budget, not the judge calls, ended it (another machine may differ)
    eager_ok: bool | None = None  # eager raised in no call of the result (kept by every accepted edit)

    @property
    def lines(self) -> int:
        return program_lines(self.case.source)


SHRINK_EXAMPLES = 300  # Hypothesis's shrinker: at most this many programs judged (stage 1)
CANDIDATE_SECONDS = 30  # a candidate program that runs longer (a deleted loop step) is rejected, not waited for


@contextmanager
def time_limit(seconds: float) -> Iterator[None]:
    """Raise TimeoutError in this thread after `seconds`, and again every second until the block ends (the
    program run catches the first one as its call's error, and the next call may loop again), then raise it
    from the block whatever the block returned (SIGALRM; a no-op off the main thread)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    deadline = time.monotonic() + seconds

    def expire(signum, frame):
        raise TimeoutError(f"ran past {seconds} s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds, 1.0)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    if time.monotonic() >= deadline:
        raise TimeoutError(f"ran past {seconds} s")


def program_lines(source: str) -> int:
    """What the size target counts: non-blank lines of the program (the checker is not counted)."""
    return sum(1 for line in source.splitlines() if line.strip())


class Judge:
    """Runs candidate programs and answers: does the target failure still appear?"""

    def __init__(self, compiler: Compiler, spec: CompileSpec, target: Target, limit: int | None = None) -> None:
        self.compiler, self.spec, self.target, self.limit = compiler, spec, target, limit
        self.calls = 0

    def finding(self, case: Case) -> Finding | None:
        if self.limit is not None and self.calls >= self.limit:
            return None  # out of judge calls: no candidate is accepted any more
        self.calls += 1
        try:
            with time_limit(CANDIDATE_SECONDS):
                result = judge(case, self.compiler, self.spec, only=(self.target.oracle,) if self.target.oracle else (),
                               eager_ok=self.target.eager_ok)
        except Exception:  # a candidate that breaks or runs too long (a loop whose step was deleted) is rejected
            return None
        if result.eager_ok != self.target.eager_ok:
            return None
        return next((f for f in result.findings if f.signature == self.target.signature), None)


def output_named(finding: Finding) -> int | None:
    """The position of the entry's returned tuple an outputs finding names first (`out[1]`), else None."""
    match = re.match(r"call \d+: out\[(\d+)\]", finding.message) if finding.oracle == "outputs" else None
    return int(match.group(1)) if match else None


def _with_choices(case: Case) -> Case:
    """A saved generated case carries its seed and families; re-draw it to recover the choice sequence."""
    if case.choices or case.seed is None:
        return case
    try:
        drawn = draw_case(case.seed, case.families)
    except Exception:
        return case
    return replace(case, choices=drawn.choices) if drawn.source.strip() == case.source.strip() else case


def shrink_choices(case: Case, judge_: Judge, deadline: float, max_examples: int = 300) -> Case | None:
    """Stage 1: Hypothesis's shrinker over the case's choice sequence, toward the same signature."""
    from dynfuzz.generators.compose import programs
    from dynfuzz.generators.hypothesis_compat import shrink_choices as hypothesis_shrink

    def test_fn(data) -> None:
        program = data.draw(programs(case.families))
        if time.monotonic() > deadline:
            return
        candidate = case_from_program(program, families=case.families, choices=tuple(data.choices))
        if judge_.finding(candidate) is not None:
            data.mark_interesting(("same-signature", judge_.target.signature))

    shrunk_choices = hypothesis_shrink(case.choices, test_fn, max_examples=max_examples)
    if shrunk_choices is None:
        return None
    from dynfuzz.generators.case import redraw

    shrunk = redraw(shrunk_choices, case.families)
    return replace(shrunk, seed=case.seed)


def choose_target(case: Case, compiler: Compiler, spec: CompileSpec, signature: str | None) -> tuple[Target, Finding]:
    """The finding to preserve: the requested (or saved) signature if it reproduces, else the most severe."""
    from dynfuzz.oracles.model import SEVERITY

    result = judge(case, compiler, spec)
    if not result.findings:
        raise UsageError(f"the program does not diverge under {spec.describe()}; nothing to minimize")
    by_sig = {f.signature: f for f in result.findings}
    if signature and signature in by_sig:
        chosen = by_sig[signature]
    else:
        chosen = max(result.findings, key=lambda f: SEVERITY.get(f.severity, 0))
    return Target(chosen.signature, result.eager_ok, chosen.oracle), chosen


def minimize(case: Case, spec: CompileSpec, budget: float, signature: str | None = None,
             phases: Phases | None = None, max_calls: int | None = None,
             shrink_examples: int = SHRINK_EXAMPLES) -> Minimized:
    """Both stages within `budget` seconds (and `max_calls` judge calls, when given: then the result does not
    depend on the machine's speed unless the seconds ran out first); the result still shows the chosen
    finding's signature. `phases` (when given) receives the seconds and judge calls of each phase."""
    phases = phases if phases is not None else Phases()
    start = time.monotonic()
    deadline = start + budget
    compiler = make_compiler(spec)
    with phases.phase("rejudge"):
        target, finding = choose_target(case, compiler, spec, signature)
    phases.count("rejudge")
    judge_ = Judge(compiler, spec, target, max_calls)
    original = program_lines(case.source)
    stage1 = False
    with phases.phase("shrink"):
        case = _with_choices(case)
        if case.choices and shrink_examples > 0:
            shrunk = shrink_choices(case, judge_, start + budget * 0.5, shrink_examples)
            if shrunk is not None and len(shrunk.source) < len(case.source):
                found = judge_.finding(shrunk)
                if found is not None:
                    case, finding, stage1 = shrunk, found, True
    phases.count("shrink", judge_.calls)
    stats = None
    calls = judge_.calls
    with phases.phase("reduce"):
        if case.eager_source is not None and judge_.finding(replace(case, eager_source=None)) is not None:
            case = replace(case, eager_source=None)  # the failure shows without the plain-Python rendering
        # A cond program whose failure needs eager's plain `if` rendering is reduced with the rendering made
        # anew from each candidate (it was left whole: an 88-line repro on 2.5.1).
        twin = case.eager_source is not None and derives_twin(case.source, case.eager_source)
        if (case.eager_source is None or twin) and time.monotonic() < deadline:
            base = case

            def edited(source: str) -> Case:
                return replace(base, source=source, choices=(), eager_source=cond_as_if(source) if twin else None)

            def still_fails(source: str) -> bool:
                return judge_.finding(edited(source)) is not None

            source, stats = reduce_source(case.source, still_fails, case.entry, deadline, output_named(finding))
            if source != case.source:
                reduced = edited(source)
                found = judge_.finding(reduced)
                if found is not None:
                    case, finding = reduced, found
    phases.count("reduce", judge_.calls - calls)
    timed_out = time.monotonic() >= deadline or bool(stats and stats.timed_out)
    return Minimized(case, finding, time.monotonic() - start, original, stage1, stats, timed_out, target.eager_ok)


def minimize_file(saved: SavedProgram, spec: CompileSpec, budget: float, out: Path | None,
                  signature: str | None = None) -> tuple[Minimized, Path]:
    """`dynfuzz minimize FILE`: minimize a saved finding or hand-written script and write the result."""
    m = minimize(saved.case, spec, budget, signature or saved.meta.get("signature"))
    path = out or saved.path.with_name(saved.path.stem + ".min.py")
    write_minimized(m, spec, path, saved.meta)
    return m, path
