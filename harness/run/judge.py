"""The per-case pipeline: run eagerly, run compiled, judge with every oracle.

Used by campaign workers, `dynfuzz check`, the gate and the benchmark, so all
of them see exactly the same behaviour.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field

from dynfuzz.generators.case import Case
from dynfuzz.oracles import Finding, Observations, run_oracles
from dynfuzz.run.compilers import Compiler, CompileSpec
from dynfuzz.run.execute import observe


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

    @property
    def torch_seconds(self) -> float:
        return self.timings.get("eager", 0.0) + self.timings.get("compile", 0.0) + self.timings.get("compiled_run", 0.0)


def judge(case: Case, compiler: Compiler, spec: CompileSpec, only: tuple[str, ...] = (),
          reference: bool | None = None, guards: bool | None = None) -> CaseResult:
    """Run `case` eagerly and through `compiler`, and return every oracle's findings, deduplicated.

    `reference` traces the case with reference_impl (skipped when it is unsupported); `guards` runs the
    guard perturbations, which need the trace and cost about one compile each. Both default to the
    spec's settings (`--reference`, `--guards`), off unless asked for."""
    guards = spec.guards if guards is None else guards
    reference = spec.reference or guards if reference is None else reference or guards
    start = time.perf_counter()
    compiler.reset()
    eager = observe(case.eager_source or case.source, case.entry, spec.device, None, "eager", keep_live=True)
    compiled = observe(case.source, case.entry, spec.device, compiler, "compiled", keep_live=True)
    fullgraph = bool(compiled.extra.get("compile_options", {}).get("fullgraph", spec.fullgraph))
    obs = Observations(eager, compiled, spec.backend, spec.device, fullgraph, spec.compiler)
    trace, ref_info = _reference(case, spec, compiler, obs, reference, guards)
    findings = _unique(run_oracles(case, obs, trace, only))
    total = time.perf_counter() - start
    timings = {
        "eager": eager.torch_seconds,
        "compile": compiled.first_call_seconds,
        "compiled_run": compiled.torch_seconds - compiled.first_call_seconds,
    }
    timings["harness"] = max(total - sum(timings.values()), 0.0)
    timings["total"] = total
    eager_ok = eager.setup_error is None and all(c.error is None for c in eager.calls)
    return CaseResult(findings, case.tags, eager_ok, timings, compiled.frames, compiled.graph_breaks, ref_info)


def _reference(case: Case, spec: CompileSpec, compiler: Compiler, obs: Observations, reference: bool,
               guards: bool):
    """The reference trace (None when off or unsupported) and, when enabled, the guard perturbations."""
    if not reference:
        return None, {"status": "off"}
    from dynfuzz.run.reference import try_trace

    trace, info = try_trace(case, spec.device)
    if trace is not None and guards and trace.calls and trace.first.error is None:
        from dynfuzz.run.guards import guard_check

        start = time.perf_counter()
        obs.extra["guards"] = guard_check(case, compiler, trace, spec.device)
        info["guards_ms"] = round((time.perf_counter() - start) * 1000, 3)
        info["perturbations"] = len(obs.extra["guards"])
    return trace, info


def _unique(findings: list[Finding]) -> list[Finding]:
    seen: dict[str, Finding] = {}
    for f in findings:
        seen.setdefault(f.signature, f)
    return list(seen.values())
