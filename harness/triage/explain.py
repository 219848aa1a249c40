"""Explain a finding: which construct and which call-plan perturbation it needs, by ablation.

The classifier (`dynfuzz.triage.constructs`) names the constructs of the (minimized) program. Ablation
takes each one out in turn — a statement replaced by `pass`, a perturbation reverted, a compile
setting dropped — and re-judges: a construct without which the divergence (same oracle, same class)
disappears is responsible. The bucket key names the most specific responsible construct, the
responsible perturbation when the divergence first shows on a re-call, and the responsible settings.

Ablation is capped by a number of judge calls, never by seconds, so a slow machine reaches the same
key as a fast one. `cheap_explanation` is the same naming without any judge call: the key a campaign
files a finding under before (or instead of) minimizing it.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, replace

from dynfuzz.generators.case import Case
from dynfuzz.oracles import Finding
from dynfuzz.run.compilers import Compiler, CompileSpec, make_compiler
from dynfuzz.run.judge import judge
from dynfuzz.triage.buckets import (
    CLASSES,
    bucket_key,
    divergence_class,
    error_of,
    fault_key,
    graph_break_identity,
    graph_break_name,
    tier_of,
)
from dynfuzz.triage.constructs import Construct, classify, family
from dynfuzz.triage.identity import GENERIC_MECHANISMS
from dynfuzz.triage.phases import Phases

MAX_JUDGE_CALLS = 12
# Minimization before explanation: the source reducer alone (Hypothesis's shrinker is skipped: see
# bench/minimize.py), stopped by judge calls so the key does not depend on machine speed; a campaign's
# --minimize-budget seconds are only a backstop (`Identified.stable` false when they ran out first).
MAX_MINIMIZE_CALLS = 400
SHRINK_EXAMPLES = 0
NO_CONSTRUCT = "tensor ops"  # nothing the classifier names is needed: plain tensor code diverges
RECALL_CLASSES = frozenset({"missing-recompile", "extra-recompile"})

# Note [A key names what Dynamo did]
# A key decides the bucket, whether a finding is known and what a user counts as one bug, so for the bug tiers it
# names what Dynamo did (`triage/identity.py`): a crash by its exception type and first torch frames outside
# generic wrappers; a silent divergence by the mechanism that failed (a missing guard and what changed, a side
# effect on a kind of object, a wrong output) and the Dynamo behaviour the divergence needs. The program's
# constructs stay in cheap keys (what a campaign files before triage) and in refusal keys. A wrong output value that
# needs no such behaviour (its passing neighbours build the same trackers) is named by the tracker method that made
# the wrong value (`run/value_provenance.py`: `wrong output value from FunctoolsPartialVariable.call_function`).
# Localization's suspects go to the report only: on faults with a known location (bench/identity.py) they did not
# find the patched function often enough to split buckets by them.


# Note [A model step unlike Python names the fault]
# While triage re-judges a silent divergence, `run/model_checks.py` compares some of Dynamo's model steps with
# CPython's at the same step: a closure's free variables bound to the cells the function really has, a builtin
# container method applied to a model of the container and its arguments, a write to a pre-existing container
# recorded for replay, an in-place operator giving back its own container. The first step that disagreed is the
# key (`deque.appendleft unlike Python in DequeVariable.call_method`): it names the tracker method that went wrong,
# found by running it, not by statistics, and it is the same whether the wrong value is returned, read back or left
# in the caller's state. On the Dynamo mutants (bench/identity.py) the checks fired on every program of the seven
# mutants of these mechanisms and on none of the 72 benchmark or 102 corpus programs with unmodified torch: a
# check that cannot decide (items no model can be made of, a method that compares items) notes nothing. Guards
# keep their own key: a missing guard is seen between calls, not in a step.


@dataclass(frozen=True)
class Explanation:
    """Why a finding diverges, in the terms its bucket key is made of."""

    oracle: str
    cls: str
    construct: str
    perturbation: str | None = None
    error: str | None = None
    layer: str | None = None  # set by layer triangulation (backends), when it ran
    constructs: tuple[str, ...] = ()  # every name the classifier gave the program
    responsible: tuple[str, ...] = ()  # those ablation found the divergence needs
    judge_calls: int = 0
    ablated: bool = False  # False: named without ablation (a cheap key)
    locus: str | None = None  # `file:function` localization ranks first (report only: never in the key)
    mechanism: str | None = None  # what Dynamo did wrong (`triage/identity.py`): the key of a miscompile or crash

    @property
    def key(self) -> str:
        """A cheap key names the surface (`<oracle>/<class>: <construct>...`); an explained miscompile or crash is
        keyed by its identity (`<tier>: <mechanism>[ under <settings>] @<layer>`, Note [A key names what Dynamo
        did]); a refusal or performance finding by its construct's family (`<tier>: <family>...`)."""
        if not self.ablated:
            return bucket_key(self.oracle, self.cls, self.construct, self.perturbation, self.error, self.layer)
        base, _, settings = self.construct.partition(" under ")
        if self.mechanism is not None:
            mechanism, typed = self.mechanism, graph_break_identity(self.mechanism)
            if typed is not None:  # Note [A graph break's type is its identity] (an older triage kept frames)
                mechanism = typed
                settings = ", ".join(s for s in settings.split(", ") if s and not s.startswith(_FATAL_SETTINGS))
            named = mechanism + (f" under {settings}" if settings else "")
            return fault_key(self.cls, named, layer=self.layer)
        named = family(base) if base != NO_CONSTRUCT else ""
        if settings:
            named = f"{named} under {settings}".strip()
        return fault_key(self.cls, named or None, self.perturbation, self.error, None, self.layer)

    @property
    def generic(self) -> bool:
        """The key names no mechanism and no frame (a wrong output value with no Dynamo behaviour it needs, a crash
        with no frame outside the wrappers and no graph-break type, no construct needed): it would hide any other
        such divergence, so it never matches a known issue."""
        if not self.ablated:
            return True
        if self.mechanism is not None:
            return self.mechanism in GENERIC_MECHANISMS or (tier_of(self.cls) == "crash" and " in torch/" not in
                                                            self.mechanism and not _typed(self.mechanism))
        return self.construct.partition(" under ")[0] == NO_CONSTRUCT

    @property
    def unexplained(self) -> bool:
        """A silent divergence explained, yet nothing names its cause (`generic`): it keeps its cheap key (a
        crash is named by its type at least, so it is never unexplained)."""
        return self.ablated and self.generic and tier_of(self.cls) == "miscompile"

    @property
    def cause(self) -> str:
        """One line for people: the class's meaning, the construct, the perturbation, the error."""
        line = f"{self.mechanism or self.construct}: {CLASSES[self.cls]}"
        if self.perturbation:
            line += f", once the call plan's change between calls ({self.perturbation}) has run"
        if self.error and self.error != self.mechanism:
            line += f" ({self.error})"
        return line


def _recall(finding: Finding, cls: str) -> bool:
    return bool(finding.call) or cls in RECALL_CLASSES


def _choose(finding: Finding, cls: str, constructs: list[Construct], responsible: set[str],
            tested: set[str]) -> tuple[str, str | None]:
    """The key's construct (with responsible settings) and perturbation: the most specific one ablation
    found needed, else the most specific one it did not test, else none (`NO_CONSTRUCT`: ablation found none
    needed, so naming one would file an unrelated construct's key); none tested: a cheap key, the most specific."""
    def pick(role: str) -> str | None:
        named = [c.name for c in constructs if c.role == role]
        needed = [n for n in named if n in responsible] or [n for n in named if n not in tested]
        if not needed and not tested:
            needed = named
        return needed[0] if needed else None

    construct = pick("construct") or NO_CONSTRUCT
    plans = [c.name for c in constructs if c.role == "perturbation"]
    perturbation = next((n for n in plans if n in responsible), None)
    if perturbation is None and not tested:  # a cheap key: the plan's most specific change, unverified
        perturbation = plans[0] if plans else None
    settings = sorted(c.name for c in constructs if c.role == "setting" and c.name in responsible)
    if settings:
        construct += " under " + ", ".join(settings)
    return construct, perturbation if _recall(finding, cls) else None


def _typed(crash: str) -> bool:
    """A crash named by a graph break's type (`Unsupported (Read uninitialized cell) in ...`), not by frames."""
    return graph_break_name(crash) is not None


# Note [A graph break's type is its identity]
# A graph break that is a crash (Dynamo gave up on code eager runs, and the settings made that fatal) is named by
# the type Dynamo gave it, `Unsupported (Read uninitialized cell)`: its frames are those of the entry point that
# re-raised it (`eval_frame.py:inner` for torch._dynamo.export, `convert_frame.py:_fullgraph_capture_frame` for
# aot_compile and strict export) and the settings that made it fatal (fullgraph, an export mode) are how it
# surfaced, not what went wrong. A 30-minute 2.13 run filed one walrus-in-a-comprehension fault, a known issue,
# as five new buckets, one per entry point. Not a type that names the user code's own exception (`Observed
# exception`, `GENERIC_GRAPH_BREAKS`): that is any program's, and keeps its frames and settings.
_FATAL_SETTINGS = ("fullgraph=", "export=")


CRASH_CONSTRUCT = "torch"  # a cheap crash key names its frames, not a construct (see `cheap_explanation`)
# ...or, for an exception the program raised on what the compiled frame handed it, the shape of its message
# (Note [An error the program raised is not torch's] in oracles/exceptions.py)
PROGRAM_CONSTRUCT = "program"


def cheap_explanation(case: Case, finding: Finding) -> Explanation:
    """The key without ablation: the most specific construct of the program as it is (no judge calls); a crash
    the worker read identity frames of is named by them instead, as its explained key will be (Note [A crash's
    identity is cheap] in campaign/crash_join.py): its surface would split one crash into a bucket per program. Not an
    exception the traced code raised, nor a typed graph break: Dynamo re-raises those from frames that name
    nothing of the fault, and the program's construct is what tells them apart."""
    cls = divergence_class(finding)
    try:
        constructs = classify(case.source, case.entry)
    except SyntaxError:
        constructs = []
    names = tuple(c.name for c in constructs)
    error = error_of(finding)
    frames = getattr(finding, "crash_frames", ())
    recursion = "(RecursionError)" in (error or "")  # where the stack ran out depends on the process's depth
    if frames and error and tier_of(cls) == "crash" and cls != "trace-exception" and not _typed(error) \
            and not recursion:
        named = f"{error.split(' ', 1)[0]} in {' < '.join(frames)}"
        return Explanation(finding.oracle, cls, CRASH_CONSTRUCT, None, named, finding.layer, constructs=names)
    raised = getattr(finding, "raised", None)
    if raised and tier_of(cls) == "crash":
        return Explanation(finding.oracle, cls, PROGRAM_CONSTRUCT, None, raised, finding.layer, constructs=names)
    construct, perturbation = _choose(finding, cls, constructs, set(), set())
    return Explanation(finding.oracle, cls, construct, perturbation, error, finding.layer, constructs=names)


def _layer(case: Case, finding: Finding, spec: CompileSpec) -> str | None:
    """The first diverging layer (harness/triage/triangulate.py): known from a `--backends` run, else found by
    re-running on each backend; None for a double, which replaces the whole compiler, and when no
    backend reproduces the divergence."""
    if finding.layer or spec.compiler != "torch":
        return finding.layer
    from dynfuzz.triage.triangulate import UNLOCATED, triangulate

    layering = triangulate(case, finding, spec, stop_at_first=True)
    return None if layering.layer == UNLOCATED else layering.tag


def _enables(case: Case, c: Construct, finding: Finding, cls: str, compiler: Compiler, spec: CompileSpec) -> bool:
    """Does the divergence also show when every call starts from the changed state (`Construct.fresh`)?
    Then the change only leads to the buggy code, and the key does not name it as a stale-guard change."""
    from dynfuzz.triage.minimize import CANDIDATE_SECONDS, time_limit

    source = c.fresh(case.source)
    eager_source = c.fresh(case.eager_source) if case.eager_source is not None else None
    if source is None or (case.eager_source is not None and eager_source is None):
        return False
    try:
        with time_limit(CANDIDATE_SECONDS):
            result = judge(replace(case, source=source, eager_source=eager_source, choices=()), compiler, spec)
    except Exception:
        return False
    return any(f.oracle == finding.oracle and divergence_class(f) == cls for f in result.findings)


def explain(case: Case, finding: Finding, spec: CompileSpec, compiler: Compiler | None = None,
            max_calls: int = MAX_JUDGE_CALLS, phases: Phases | None = None) -> Explanation:
    """Judge the case once more keeping what the oracles saw, ablate each construct, perturbation and setting (at
    most `max_calls` judge calls) and name the key. An ablation counts a construct responsible only when the
    ablated program still runs cleanly in eager and no longer diverges. `phases` (when given) receives the
    seconds and judge calls of the ablation and of layer triangulation."""
    from dynfuzz.triage.identity import observe_case
    from dynfuzz.triage.minimize import CANDIDATE_SECONDS, time_limit

    phases = phases if phases is not None else Phases()

    started = time.perf_counter()
    cls = divergence_class(finding)
    cheap = cheap_explanation(case, finding)
    compiler = compiler or make_compiler(spec)
    try:
        with time_limit(CANDIDATE_SECONDS):
            observed = observe_case(case, compiler, spec,
                                    provenance=finding.oracle == "outputs" and tier_of(cls) == "miscompile",
                                    checks=tier_of(cls) == "miscompile")
    except Exception:  # noqa: BLE001 - no observations: the mechanism stays generic
        observed = None
    constructs = classify(case.source, case.entry) if cheap.constructs else []
    in_eager = {c.name: c for c in classify(case.eager_source, case.entry)} if case.eager_source else {}
    recall = _recall(finding, cls)
    order = [c for c in constructs if c.role == "construct"] + \
        [c for c in constructs if c.role == "perturbation" and recall] + \
        [c for c in constructs if c.role == "setting"]
    responsible: set[str] = set()
    tested: set[str] = set()
    passing: list[tuple[str, ...]] = []  # Dynamo's behaviours in each ablation that took the divergence away
    calls = 0
    for c in order:
        if calls >= max_calls:
            break
        source = c.ablate(case.source)
        eager_source = case.eager_source
        if eager_source is not None:  # eager runs another rendering: take the construct out of both
            twin = in_eager.get(c.name)
            if twin is None:  # what the renderings differ by (a torch.cond eager runs as an `if`): the suspect
                responsible.add(c.name)
                continue
            eager_source = twin.ablate(eager_source)
        if source is None or (case.eager_source is not None and eager_source is None):
            continue
        calls += 1
        try:
            with time_limit(CANDIDATE_SECONDS):
                result = judge(replace(case, source=source, eager_source=eager_source, choices=()), compiler, spec,
                               eager_ok=True)
        except Exception:
            continue  # the ablated program broke dynfuzz itself, or ran too long: no evidence either way
        if not result.eager_ok:
            continue  # the ablation broke the program itself: that the divergence went says nothing
        tested.add(c.name)
        if not any(f.oracle == finding.oracle and divergence_class(f) == cls for f in result.findings):
            responsible.add(c.name)
            passing.append(tuple(getattr(result, "behaviours", ())))
            if c.role == "perturbation" and calls < max_calls and _enables(case, c, finding, cls, compiler, spec):
                calls += 1
                responsible.discard(c.name)  # it leads to the buggy path; no guard is missing
    construct, perturbation = _choose(finding, cls, constructs, responsible, tested)
    mechanism = _mechanism(finding, cls, observed, perturbation, passing, cheap.error)
    phases.seconds["explain"] = phases.seconds.get("explain", 0.0) + time.perf_counter() - started
    phases.count("explain", calls + 1)
    with phases.phase("triangulate"):
        layer = _layer(case, finding, spec)
    return Explanation(finding.oracle, cls, construct, perturbation, cheap.error, layer,
                       constructs=cheap.constructs, responsible=tuple(sorted(responsible)), judge_calls=calls,
                       ablated=True, mechanism=mechanism)


_SILENT = {"wrong-grad": "wrong gradient", "missing-exception": "exception swallowed",
           "accepted-illegal": "illegal program accepted"}


def _mechanism(finding: Finding, cls: str, observed, perturbation: str | None, passing: list[tuple[str, ...]],
               error: str | None) -> str | None:
    """The identity of a miscompile or crash (Note [A key names what Dynamo did]); None for other tiers."""
    from dynfuzz.triage import identity

    tier = tier_of(cls)
    raised = getattr(finding, "raised", None)
    if tier == "crash" and raised:  # Note [An error the program raised is not torch's]
        return raised
    if tier == "crash":
        error_type = error.split(" ", 1)[0] if error else None
        frames = identity.crash_identity(observed, error_type) if observed is not None else ()
        typed = graph_break_identity(error)
        if typed is not None:  # Note [A graph break's type is its identity]
            return typed
        name = error.split(" in ", 1)[0] if error else cls
        return f"{name} in {' < '.join(frames)}" if frames else name
    if tier != "miscompile":
        return None
    obs = observed.obs if observed is not None else None
    call = finding.call or 0
    if cls == "missing-recompile" or (call > 0 and perturbation is not None):
        return identity.guard_mechanism(obs, call)
    if observed is not None and observed.violations:  # Note [A model step unlike Python names the fault]
        return observed.violations[0]
    needed = identity.needed_behaviours(observed.behaviours, passing) if observed is not None else []
    if not needed and finding.oracle == "effects" and observed is not None:
        replayed = [b for b in observed.behaviours if b.startswith("side-effect:")]
        if len(replayed) == 1:  # no ablation told, but the state diverged and Dynamo replayed one kind of mutation
            needed = replayed
    if needed and needed[0].startswith("side-effect:"):  # Dynamo replays this kind of mutation wrongly: seen as a
        return "side effect " + needed[0].split(":", 1)[1]  # wrong state, or as a wrong value read back
    if cls in _SILENT:
        what = _SILENT[cls]
    elif finding.oracle == "effects":
        what = identity.state_mechanism(obs, call) or "side effect"
    else:
        what = identity.output_mechanism(finding)
        origin = observed.origin(finding) if observed is not None and not needed else None
        if origin:  # no behaviour the divergence needs, but the tracker method that made the wrong value
            return f"{what} from {origin}"
    return f"{what} via {needed[0]}" if needed else what


@dataclass
class Identified:
    """A finding after minimization and explanation: what a campaign files it under."""

    case: Case
    finding: Finding
    explanation: Explanation
    stable: bool  # False: the seconds backstop stopped minimization before its judge calls ran out
    eager_ok: bool | None = None  # eager raised in no call: its repro need not catch exceptions


def identify(case: Case, finding: Finding, spec: CompileSpec, budget: float, phases: Phases | None = None,
             compiler: Compiler | None = None) -> Identified:
    """Minimize (`MAX_MINIMIZE_CALLS` judge calls, `budget` seconds as a backstop) and explain one finding: the
    code campaign triage (`triage.queue.triage_one`) and `dynfuzz explain FILE` both run, so both name one key.
    Raises UsageError when the finding does not show again."""
    from dynfuzz.triage.minimize import minimize

    m = minimize(case, spec, budget, finding.signature, phases, max_calls=MAX_MINIMIZE_CALLS,
                 shrink_examples=SHRINK_EXAMPLES)
    explanation = explain(m.case, replace(m.finding, layer=finding.layer), spec, compiler or make_compiler(spec),
                          phases=phases)
    return Identified(m.case, m.finding, explanation, not m.timed_out, m.eager_ok)


def filed(case: Case, finding: Finding, explanation: Explanation) -> Explanation:
    """The explanation a finding is filed under once triaged: its own, unless nothing names its cause
    (`Explanation.unexplained`); then the original program's cheap key, status `unexplained`."""
    if not explanation.unexplained:
        return explanation
    return replace(cheap_explanation(case, finding), layer=explanation.layer)
