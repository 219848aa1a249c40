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
from dynfuzz.triage.buckets import CLASSES, bucket_key, divergence_class, error_of, fault_key, tier_of
from dynfuzz.triage.constructs import Construct, classify, family
from dynfuzz.triage.phases import Phases

MAX_JUDGE_CALLS = 12
NO_CONSTRUCT = "tensor ops"  # nothing the classifier names is needed: plain tensor code diverges
RECALL_CLASSES = frozenset({"missing-recompile", "extra-recompile"})


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
    locus: str | None = None  # `file:function` of torch that localization ranks first by a clear margin

    @property
    def key(self) -> str:
        """A cheap key names the surface (`<oracle>/<class>: <construct>...`); an explained key names the fault
        (`<tier>: <family>...`, see Note [Explained keys name the fault])."""
        if not self.ablated:
            return bucket_key(self.oracle, self.cls, self.construct, self.perturbation, self.error, self.layer)
        base, _, settings = self.construct.partition(" under ")
        named = family(base) if base != NO_CONSTRUCT else ""
        if settings:
            named = f"{named} under {settings}".strip()
        return fault_key(self.cls, named or None, self.perturbation, self.error, self.locus, self.layer)

    @property
    def unexplained(self) -> bool:
        """A silent divergence explained, yet nothing names its cause: no construct or setting is needed and
        localization named no function (a crash is named by its frame, so it is never unexplained)."""
        return self.ablated and self.construct == NO_CONSTRUCT and not self.locus and tier_of(self.cls) == "miscompile"

    @property
    def cause(self) -> str:
        """One line for people: the class's meaning, the construct, the perturbation, the error."""
        line = f"{self.construct}: {CLASSES[self.cls]}"
        if self.perturbation:
            line += f", once the call plan's change between calls ({self.perturbation}) has run"
        if self.error:
            line += f" ({self.error})"
        return line


def _recall(finding: Finding, cls: str) -> bool:
    return bool(finding.call) or cls in RECALL_CLASSES


def _choose(finding: Finding, cls: str, constructs: list[Construct], responsible: set[str],
            tested: set[str]) -> tuple[str, str | None]:
    """The key's construct (with responsible settings) and perturbation: the most specific one ablation
    found needed, else the most specific one it did not test (none tested: a cheap key), else (each one
    alone is dispensable: redundant causes, such as two lost writes) the most specific one."""
    def pick(role: str) -> str | None:
        named = [c.name for c in constructs if c.role == role]
        needed = [n for n in named if n in responsible] or [n for n in named if n not in tested] or named
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


def cheap_explanation(case: Case, finding: Finding) -> Explanation:
    """The key without ablation: the most specific construct of the program as it is (no judge calls)."""
    cls = divergence_class(finding)
    try:
        constructs = classify(case.source, case.entry)
    except SyntaxError:
        constructs = []
    construct, perturbation = _choose(finding, cls, constructs, set(), set())
    return Explanation(finding.oracle, cls, construct, perturbation, error_of(finding), finding.layer,
                       constructs=tuple(c.name for c in constructs))


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
    from dynfuzz.run.judge import judge
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
    """Ablate each construct, perturbation and setting (at most `max_calls` judge calls) and name the key.
    `phases` (when given) receives the seconds and judge calls of the ablation and of layer triangulation."""
    from dynfuzz.run.judge import judge
    from dynfuzz.triage.minimize import CANDIDATE_SECONDS, time_limit

    phases = phases if phases is not None else Phases()

    started = time.perf_counter()
    cls = divergence_class(finding)
    cheap = cheap_explanation(case, finding)
    if not cheap.constructs:
        return replace(cheap, ablated=True, layer=_layer(case, finding, spec))
    compiler = compiler or make_compiler(spec)
    constructs = classify(case.source, case.entry)
    in_eager = {c.name: c for c in classify(case.eager_source, case.entry)} if case.eager_source else {}
    recall = _recall(finding, cls)
    order = [c for c in constructs if c.role == "construct"] + \
        [c for c in constructs if c.role == "perturbation" and recall] + \
        [c for c in constructs if c.role == "setting"]
    responsible: set[str] = set()
    tested: set[str] = set()
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
                result = judge(replace(case, source=source, eager_source=eager_source, choices=()), compiler, spec)
        except Exception:
            continue  # the ablated program broke dynfuzz itself, or ran too long: no evidence either way
        tested.add(c.name)
        if not any(f.oracle == finding.oracle and divergence_class(f) == cls for f in result.findings):
            responsible.add(c.name)
            if c.role == "perturbation" and calls < max_calls and _enables(case, c, finding, cls, compiler, spec):
                calls += 1
                responsible.discard(c.name)  # it leads to the buggy path; no guard is missing
    construct, perturbation = _choose(finding, cls, constructs, responsible, tested)
    phases.seconds["explain"] = phases.seconds.get("explain", 0.0) + time.perf_counter() - started
    phases.count("explain", calls)
    with phases.phase("triangulate"):
        layer = _layer(case, finding, spec)
    return Explanation(finding.oracle, cls, construct, perturbation, cheap.error, layer,
                       constructs=cheap.constructs, responsible=tuple(sorted(responsible)), judge_calls=calls,
                       ablated=True)
