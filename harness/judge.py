"""The per-case pipeline: run eagerly, run compiled, judge with every oracle.

Used by campaign workers, `dynfuzz check`, the gate and the benchmark, so all
of them see exactly the same behaviour.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field

from generators.case import Case
from oracles import Finding, Observations, run_oracles

from .compilers import Compiler, CompileSpec
from .execute import observe


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


def judge(case: Case, compiler: Compiler, spec: CompileSpec, only: tuple[str, ...] = ()) -> CaseResult:
    """Run `case` eagerly and through `compiler`, and return every oracle's findings, deduplicated."""
    start = time.perf_counter()
    compiler.reset()
    eager = observe(case.eager_source or case.source, case.entry, spec.device, None, "eager", keep_live=True)
    compiled = observe(case.source, case.entry, spec.device, compiler, "compiled", keep_live=True)
    obs = Observations(eager, compiled, spec.backend, spec.device, spec.fullgraph, spec.compiler)
    findings = _unique(run_oracles(case, obs, None, only))
    total = time.perf_counter() - start
    timings = {
        "eager": eager.torch_seconds,
        "compile": compiled.first_call_seconds,
        "compiled_run": compiled.torch_seconds - compiled.first_call_seconds,
    }
    timings["harness"] = max(total - sum(timings.values()), 0.0)
    timings["total"] = total
    eager_ok = eager.setup_error is None and all(c.error is None for c in eager.calls)
    return CaseResult(findings, case.tags, eager_ok, timings, compiled.frames, compiled.graph_breaks)


def _unique(findings: list[Finding]) -> list[Finding]:
    seen: dict[str, Finding] = {}
    for f in findings:
        seen.setdefault(f.signature, f)
    return list(seen.values())
