"""Running the reference tracer on a case, and `dynfuzz selfcheck`: tracer vs eager on generated programs.

The tracer interprets the compiled program's source over the same call plan the
executor runs (fresh namespace, `between`, `inputs`, the backward pass), and the
state after each call is snapshotted exactly as `execute.observe` does, so the
reference oracle can diff the two.
"""
from __future__ import annotations

import inspect
import linecache
import statistics
import time
import warnings
from collections import Counter
from typing import Any

from dynfuzz.generators.case import Case, case_seed, draw_case
from dynfuzz.oracles.snapshot import take
from dynfuzz.reference_impl import Program, ReferenceUnsupported, Trace, Tracer
from dynfuzz.run.execute import _backward, load_program, observe, program_state


def trace_case(case: Case, device: str = "cpu") -> Trace:
    """Interpret the case's whole call plan; raises ReferenceUnsupported for constructs outside the subset."""
    start = time.perf_counter()
    program = Program(case.source)
    ns, filename = load_program(case.source, "reference")
    try:
        fn = ns[case.entry]
        names = tuple(inspect.signature(fn).parameters)
        trace = Trace(case.entry, names)
        interp = Tracer(program)
        for i in range(int(ns.get("CALLS", 2))):
            between_value = None
            if i > 0 and "between" in ns:
                try:
                    between_value = ns["between"](i)
                except Exception:
                    between_value = None
            args = ns["inputs"](device, i)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                t0 = time.perf_counter()
                ct = interp.trace_call(fn, tuple(args), names)
                trace.interp_seconds += time.perf_counter() - t0
                if ct.error is None:
                    _backward(ct.output)
            ct.state = take({"args": args, "out": ct.output, "state": program_state(ns), "between": between_value})
            trace.calls.append(ct)
    finally:
        linecache.cache.pop(filename, None)
    trace.seconds = time.perf_counter() - start
    return trace


def try_trace(case: Case, device: str = "cpu") -> tuple[Trace | None, dict[str, Any]]:
    """The trace, or None with the reason recorded: the judge's optional, never-raising entry point."""
    try:
        trace = trace_case(case, device)
    except ReferenceUnsupported as e:
        return None, {"status": "unsupported", "construct": e.construct}
    except Exception as e:  # a tracer crash is a dynfuzz bug, surfaced by the selfcheck, never fatal here
        return None, {"status": "error", "construct": f"{type(e).__name__}: {e}"[:200]}
    return trace, {"status": "traced", "trace_ms": round(trace.seconds * 1000, 3)}


def selfcheck(n: int, seed: int, families: tuple[str, ...], compile_time: bool = True) -> dict[str, Any]:
    """Trace n generated cases and compare each with its eager run; returns the selfcheck summary."""
    from dynfuzz.oracles.reference_agreement import check_reference
    from dynfuzz.run.compilers import CompileSpec, make_compiler

    compiler = make_compiler(CompileSpec()) if compile_time else None
    counts: Counter = Counter()
    constructs: Counter = Counter()
    trace_ms, compile_ms, problems = [], [], []
    for index in range(n):
        case = draw_case(case_seed(seed, index), families)
        eager = observe(case.eager_source or case.source, case.entry, "cpu", None, "eager")
        if eager.setup_error is not None:
            counts["skipped"] += 1  # the program does not even load: nothing to compare
            continue
        trace, info = try_trace(case)
        if trace is None:
            key = "unsupported" if info["status"] == "unsupported" else "disagree"
            counts[key] += 1
            constructs[info["construct"]] += 1
            if key == "disagree":
                problems.append({"seed": case.seed, "why": info["construct"]})
            continue
        trace_ms.append(trace.seconds * 1000)
        findings = check_reference(eager, trace)
        key = "disagree" if findings else "agree"
        counts[key] += 1
        if findings:
            problems.append({"seed": case.seed, "why": findings[0].message[:300]})
        if compiler is not None:
            compiler.reset()
            compiled = observe(case.source, case.entry, "cpu", compiler, "compiled")
            compile_ms.append(compiled.first_call_seconds * 1000)
    return {
        "n": n, "agree": counts["agree"], "disagree": counts["disagree"], "unsupported": counts["unsupported"],
        "unsupported_constructs": dict(constructs.most_common()),
        "median_trace_ms": round(statistics.median(trace_ms), 3) if trace_ms else None,
        "median_compile_ms": round(statistics.median(compile_ms), 3) if compile_ms else None,
        "skipped": counts["skipped"],
        "problems": problems[:20],
    }

