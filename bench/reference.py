"""Cost of the reference tracer per case, against the backend-eager compile of the same case.

For each fixed-seed case: the reference trace of the whole call plan (interpreting
only, and end to end with snapshots), the first compiled call with backend
"eager" (compile + run), and optionally the guard perturbations. Prints medians
and the ratio trace / compile (target: under 0.25).

    python bench/reference.py [--cases 100] [--seed 0] [--family F] [--guards]
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from dynfuzz.generators import case_seed, draw_case  # noqa: E402
from dynfuzz.run.compilers import CompileSpec, make_compiler, quiet_torch_logs  # noqa: E402
from dynfuzz.run.execute import observe  # noqa: E402
from dynfuzz.run.reference_trace import try_trace  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=100)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--family", action="append")
    parser.add_argument("--guards", action="store_true", help="also time the guard perturbations")
    parser.add_argument("--warmup", type=int, default=3)
    args = parser.parse_args()
    quiet_torch_logs()
    spec = CompileSpec()
    compiler = make_compiler(spec)
    families = tuple(args.family or ())
    interp, total, compile_ms, guard_ms, ratios = [], [], [], [], []
    for i in range(-args.warmup, args.cases):
        case = draw_case(case_seed(args.seed + (1 if i < 0 else 0), abs(i)), families)
        trace, _ = try_trace(case)
        compiler.reset()
        compiled = observe(case.source, case.entry, "cpu", compiler, "compiled")
        if i < 0 or trace is None:
            continue
        interp.append(trace.interp_seconds * 1000)
        total.append(trace.seconds * 1000)
        compile_ms.append(compiled.first_call_seconds * 1000)
        ratios.append(trace.interp_seconds / max(compiled.first_call_seconds, 1e-9))
        if args.guards and trace.first.error is None:
            from dynfuzz.run.guard_probes import guard_check

            start = time.perf_counter()
            guard_check(case, compiler, trace)
            guard_ms.append((time.perf_counter() - start) * 1000)
    med = lambda xs: round(statistics.median(xs), 2) if xs else None  # noqa: E731
    print(f"cases traced:                 {len(interp)} / {args.cases}")
    print(f"median reference trace (ms):  {med(interp)}  (interpreting the call plan)")
    print(f"median trace end-to-end (ms): {med(total)}  (with loading, backward passes, snapshots)")
    print(f"median eager compile (ms):    {med(compile_ms)}  (first compiled call, backend=eager)")
    print(f"median trace/compile ratio:   {med(ratios)}  (target < 0.25)")
    print(f"median of end-to-end/compile: {round(med(total) / med(compile_ms), 3) if interp else None}")
    if args.guards:
        print(f"median guard check (ms):      {med(guard_ms)}  (all perturbations of one case)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
