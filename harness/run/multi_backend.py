"""Several backends, and CPU beside CUDA, in one case: every compiled run judged against one eager run.

`--backends eager,aot_eager,inductor` compiles each case on every backend named, in layer order, and
runs the oracles on each against the same eager observation. Dynamo's graph capture is common to all of
them, AOTAutograd (functionalization, decompositions, partitioning) is added by `aot_eager`, and
inductor's code generation by `inductor`; so a divergence is attributed to the first backend on which
it shows: seen with `eager` it is Dynamo's, first seen with `aot_eager` it is AOTAutograd's, only with
`inductor` it is inductor's. Each finding carries that `layer`, and the cost of each layer is timed.

`--cross-device` (with `--device cuda`) also runs the program eagerly on the CPU and compares the
compiled CUDA run against it, with the cross-device tolerances of oracles/policy.py.
"""
from __future__ import annotations

import dataclasses
import time

from dynfuzz.generators.case import Case
from dynfuzz.oracles import Finding, Observations, run_oracles
from dynfuzz.oracles.model import Observation
from dynfuzz.run.compilers import BACKENDS, Compiler, CompileSpec, make_compiler
from dynfuzz.run.execute import observe

LAYER_OF_BACKEND = {"eager": "dynamo", "aot_eager": "aot_eager", "inductor": "inductor"}
LAYERS = tuple(LAYER_OF_BACKEND[b] for b in BACKENDS)
CROSS_DEVICE = "cross-device"
CROSS_DEVICE_ORACLES = ("outputs", "effects")

_compilers: dict[CompileSpec, Compiler] = {}


def layer_of(backend: str) -> str:
    """The layer a backend adds on top of the ones before it (`eager` -> `dynamo`)."""
    return LAYER_OF_BACKEND.get(backend, backend)


def in_layer_order(backends: list[str] | tuple[str, ...]) -> tuple[str, ...]:
    """Backends sorted so that each adds one layer to the previous (eager, aot_eager, inductor)."""
    return tuple(sorted(dict.fromkeys(backends), key=lambda b: BACKENDS.index(b) if b in BACKENDS else len(BACKENDS)))


def compiler_for(spec: CompileSpec, backend: str) -> Compiler:
    """One compiler per backend, kept for the life of the process (a worker makes each once)."""
    key = dataclasses.replace(spec, backend=backend, backends=(), cross_device=False, reference=False, guards=False)
    if key not in _compilers:
        _compilers[key] = make_compiler(key)
    return _compilers[key]


def other_layers(case: Case, spec: CompileSpec, eager: Observation, primary: Observations, findings: list[Finding],
                 only: tuple[str, ...], facts: dict) -> tuple[list[Finding], dict[str, float]]:
    """The primary backend's findings plus those first seen on the other backends (and, with
    `cross_device`, against CPU eager), each with its layer; and timings per layer (`layer:<backend>:...`)."""
    from dynfuzz.run.judge import _compiled_observations

    timings = _layer_timings(primary.backend, primary.compiled)
    layered = [dataclasses.replace(f, layer=layer_of(primary.backend)) if spec.backends else f for f in findings]
    seen = {f.signature for f in layered}
    for backend in spec.backends:
        if backend == primary.backend:
            continue
        compiler = compiler_for(spec, backend)
        compiler.reset()
        obs = _compiled_observations(case, compiler, spec, backend, eager, facts)
        start = time.perf_counter()
        found = run_oracles(case, obs, None, only)
        timings.update(_layer_timings(backend, obs.compiled, time.perf_counter() - start))
        for f in found:
            if f.signature not in seen:
                seen.add(f.signature)
                layered.append(dataclasses.replace(f, layer=layer_of(backend)))
    if spec.cross_device and spec.device != "cpu":
        start = time.perf_counter()
        cpu = observe(case.eager_source or case.source, case.entry, "cpu", None, "eager-cpu")
        obs = dataclasses.replace(primary, eager=cpu, extra={**primary.extra, "cross_device": True})
        for f in run_oracles(case, obs, None, only or CROSS_DEVICE_ORACLES):
            if f.signature not in seen and f.oracle in CROSS_DEVICE_ORACLES:
                seen.add(f.signature)
                layered.append(dataclasses.replace(f, layer=CROSS_DEVICE,
                                                   message=f"{f.message} ({spec.device} compiled vs CPU eager)"))
        timings[f"layer:{CROSS_DEVICE}:run"] = time.perf_counter() - start
    return layered, timings


def _layer_timings(backend: str, compiled: Observation, judging: float = 0.0) -> dict[str, float]:
    return {f"layer:{backend}:compile": compiled.first_call_seconds,
            f"layer:{backend}:run": compiled.torch_seconds - compiled.first_call_seconds + judging}


def layer_summary(timing_sums: dict[str, float], cases: int, findings_by_layer: dict[str, int]) -> dict:
    """summary.json `layers`: per backend (and cross-device), total and mean seconds of compiling and
    running, and the findings first seen there."""
    out: dict[str, dict] = {}
    for key, seconds in timing_sums.items():
        if key.startswith("layer:"):
            _, backend, what = key.split(":", 2)
            row = out.setdefault(backend, {"layer": layer_of(backend)})
            row[f"{what}_seconds"] = round(seconds, 3)
            row[f"mean_{what}_seconds"] = round(seconds / max(cases, 1), 5)
    for row in out.values():
        row["findings"] = findings_by_layer.get(row["layer"], 0)
    return out


def backend_of(layer: str | None) -> str | None:
    """The backend whose run first shows `layer` (`dynamo` -> `eager`); None for other layers."""
    name = (layer or "").partition("/")[0]  # `inductor/cuda`: the layer, and the device it needs
    return next((b for b, known in LAYER_OF_BACKEND.items() if known == name), None)


def spec_for(spec: CompileSpec, layer: str | None) -> CompileSpec:
    """The single-backend spec that shows a finding first seen on `layer`: in a `--backends` campaign, a
    finding first seen on aot_eager is minimized, explained and rendered as an aot_eager repro."""
    if not spec.backends and not spec.cross_device:
        return spec
    backend = backend_of(layer) or spec.backend
    return dataclasses.replace(spec, backend=backend, backends=(), cross_device=layer == CROSS_DEVICE)
