"""The per-case pipeline: run eagerly, run compiled, judge with every oracle.

Used by campaign workers, `dynfuzz check`, the gate and the benchmark, so all
of them see exactly the same behaviour.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field

from dynfuzz.generators.case import Case
from dynfuzz.oracles import Finding, Observations, run_oracles
from dynfuzz.oracles.exceptions import skip_reason
from dynfuzz.oracles.model import Observation
from dynfuzz.oracles.policy import BACKEND_CONFIG, EXPORTED, RNG_USED
from dynfuzz.run.api_presence import absent_in_error, absent_in_source, absent_reason
from dynfuzz.run.behaviours import collect as collect_behaviours
from dynfuzz.run.compilers import Compiler, CompileSpec, missing_dynamo_settings
from dynfuzz.run.execute import observe
from dynfuzz.run.torch_observers import installed, start_case


@dataclass
class CaseResult:
    """What one case produced: findings, its tags, whether eager ran cleanly, and where time went."""

    findings: list[Finding]
    tags: frozenset[str]
    eager_ok: bool
    timings: dict[str, float] = field(default_factory=dict)
    frames: int = 0
    graph_breaks: int = 0
    reference: dict[str, object] = field(default_factory=dict)
    coverage: dict[str, list[int]] | None = None  # --coverage: lines this process reached first in this case
    torch_log: str = ""  # torch's own warnings/errors logged during the case (run/torch_logs.py), never printed
    skipped: str | None = None  # why the case was not judged: a deliberate refusal (oracles/exceptions.py), or
    # a Dynamo setting the program asks for that this torch lacks
    behaviours: tuple[str, ...] = ()  # what Dynamo did in the eager and compiled runs (run/behaviours.py)
    observers: tuple[str, ...] = ()  # the count-only observers installed in the process (run/torch_observers.py)

    @property
    def torch_seconds(self) -> float:
        return sum(self.timings.get(k, 0.0) for k in ("eager", "compile", "compiled_run", "other_layers"))


def judge(case: Case, compiler: Compiler, spec: CompileSpec, only: tuple[str, ...] = (),
          reference: bool | None = None, guards: bool | None = None, eager_ok: bool | None = None) -> CaseResult:
    """Run `case` eagerly and through `compiler`, and return every oracle's findings, deduplicated.

    `reference` traces the case with reference_impl (skipped when it is unsupported); `guards` runs the
    guard perturbations, which need the trace and cost about one compile each. Both default to the
    spec's settings (`--reference`, `--guards`), off unless asked for. With `eager_ok`, a case whose eager run
    raises (True: in any call) or not otherwise is answered at once, with no findings and no compile: a
    reducer's candidate that broke the program costs an eager run, not a compile."""
    guards = spec.guards if guards is None else guards
    reference = spec.reference or guards if reference is None else reference or guards
    missing = missing_dynamo_settings(case.dynamo_config)
    if missing:  # a program for another torch release: not judged, counted among the skips
        return CaseResult([], case.tags, True, skipped=f"Dynamo setting {missing[0]} absent from this torch")
    absent = next(filter(None, map(absent_in_source, filter(None, (case.source, case.eager_source)))), None)
    if absent:  # the same: an API this torch lacks (run/api_presence.py)
        return CaseResult([], case.tags, True, skipped=absent_reason(absent))
    start = time.perf_counter()
    compiler.reset()
    start_case()
    rng = _seed_rng(spec.device)
    eager = observe(case.eager_source or case.source, case.entry, spec.device, None, "eager", keep_live=True)
    absent = _absent_in_eager(eager)
    if absent:
        return CaseResult([], case.tags, True, skipped=absent_reason(absent))
    ran = eager.setup_error is None and all(c.error is None for c in eager.calls)
    if eager_ok is not None and ran != eager_ok:
        return CaseResult([], case.tags, ran)
    facts = {RNG_USED: _rng_advanced(rng, spec.device)}
    obs = _compiled_observations(case, compiler, spec, spec.backend, eager, facts)
    behaviours = collect_behaviours()
    compiled = obs.compiled
    if compiled.extra.get("unreadable_snapshots"):
        _unreadable_must_diverge(eager, compiled)
    judged = True
    if obs.extra.get(EXPORTED):  # Note [What an export run is judged on]
        from dynfuzz.run.export_runner import EXPORT_ORACLES

        only = tuple(o for o in only or EXPORT_ORACLES if o in EXPORT_ORACLES)
        judged, reference, guards = bool(only), False, False
    trace, ref_info = _reference(case, spec, compiler, obs, reference, guards)
    findings = _unique(run_oracles(case, obs, trace, only)) if judged else []
    skip = skip_reason(case, obs)
    if skip is not None:  # Note [Deliberate refusals are not findings]: calls from the refused one on are not judged
        findings = [f for f in findings if f.call is not None and f.call < skip[0]]
    layer_timings: dict[str, float] = {}
    if spec.backends or spec.cross_device:
        from dynfuzz.run.multi_backend import other_layers

        findings, layer_timings = other_layers(case, spec, eager, obs, findings, only, facts)
    total = time.perf_counter() - start
    timings = {
        "eager": eager.torch_seconds,
        "compile": compiled.first_call_seconds,
        "compiled_run": compiled.torch_seconds - compiled.first_call_seconds,
        "other_layers": sum(v for k, v in layer_timings.items() if not k.startswith(f"layer:{spec.backend}:")),
    }
    timings["harness"] = max(total - sum(timings.values()), 0.0)
    timings["total"] = total
    timings.update(layer_timings)
    result = CaseResult(findings, case.tags, ran, timings, compiled.frames, compiled.graph_breaks, ref_info)
    result.skipped = skip[1] if skip is not None else None
    result.behaviours, result.observers = behaviours, tuple(installed())
    return result


def _absent_in_eager(eager: Observation) -> str | None:
    """A torch API eager's own error says this release lacks (a tensor method, a name built at run time)."""
    errors = [eager.setup_error, *(c.error for c in eager.calls)]
    for e in filter(None, errors):
        api = absent_in_error(e.type, e.detail or e.message)
        if api:
            return api
    return None


def _seed_rng(device: str):
    """Seed the generators before each mode runs (eager and compiled draw the same random numbers), and
    return the state after seeding, to tell afterwards whether the program drew any."""
    import torch

    torch.manual_seed(0)
    return torch.get_rng_state(), torch.cuda.get_rng_state() if device == "cuda" else None


def _rng_advanced(seeded, device: str) -> bool:
    import torch

    cpu, cuda = seeded
    return not torch.equal(cpu, torch.get_rng_state()) or (
        device == "cuda" and not torch.equal(cuda, torch.cuda.get_rng_state()))


def _compiled_observations(case: Case, compiler: Compiler, spec: CompileSpec, backend: str, eager: Observation,
                           facts: dict) -> Observations:
    """Run `case` through `compiler` (for `backend`) from a seeded generator, beside the eager run."""
    _seed_rng(spec.device)
    compiled = observe(case.source, case.entry, spec.device, compiler, "compiled", keep_live=True)
    fullgraph = bool(compiled.extra.get("compile_options", {}).get("fullgraph", spec.fullgraph))
    obs = Observations(eager, compiled, backend, spec.device, fullgraph, spec.compiler)
    obs.extra.update(facts)
    obs.extra[BACKEND_CONFIG] = _backend_config(backend)
    options = compiled.extra.get("compile_options", {})
    if compiler.exports(options):
        obs.extra[EXPORTED] = options["export"]
    return obs


def _backend_config(backend: str) -> dict:
    """The inductor settings the policy's rules depend on (oracles/policy.py)."""
    if backend != "inductor":
        return {}
    import torch._inductor.config as cfg

    return {"fallback_random": bool(cfg.fallback_random), "keep_output_stride": bool(cfg.keep_output_stride)}


def _reference(case: Case, spec: CompileSpec, compiler: Compiler, obs: Observations, reference: bool,
               guards: bool):
    """The reference trace (None when off or unsupported) and, when enabled, the guard perturbations."""
    if not reference:
        return None, {"status": "off"}
    from dynfuzz.run.reference_trace import try_trace

    trace, info = try_trace(case, spec.device)
    if trace is not None and guards and trace.calls and trace.first.error is None:
        from dynfuzz.run.guard_probes import guard_check

        start = time.perf_counter()
        obs.extra["guards"] = guard_check(case, compiler, trace, spec.device)
        info["guards_ms"] = round((time.perf_counter() - start) * 1000, 3)
        info["perturbations"] = len(obs.extra["guards"])
    return trace, info


def _unreadable_must_diverge(eager: Observation, compiled: Observation) -> None:
    """The compiled run left objects its snapshot could not read (Note [An object the snapshot cannot read] in
    oracles/snapshot.py). Where eager's snapshot of the same path holds another type, that is a torch divergence
    the oracles judge as one (a `type` difference); where it holds the same type, the snapshot failed on an
    ordinary object: a SnapshotError (a harness error), as it would have been eagerly."""
    from dynfuzz.errors import SnapshotError
    from dynfuzz.oracles.snapshot import Diffs, diff

    for e_call, c_call in zip(eager.calls, compiled.calls):
        for e, c in ((e_call.before, c_call.before), (e_call.state, c_call.state)):
            unexplained = diff(e, c, out=Diffs(), limit=10**6).unreadable
            if unexplained:
                path, _, kind = unexplained[0]
                raise SnapshotError(f"{compiled.extra['unreadable_snapshots'][0]} (at {path or 'the root'}, a "
                                    f"{kind} as in eager's run)")


def _unique(findings: list[Finding]) -> list[Finding]:
    seen: dict[str, Finding] = {}
    for f in findings:
        seen.setdefault(f.signature, f)
    return list(seen.values())
