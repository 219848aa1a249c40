"""Throughput of the whole per-case pipeline, in one process, on a fixed-seed set of cases.

A case is generated, run eagerly, compiled, run (twice by the default call
plan), snapshotted and judged. Prints cases/s, the median time per case split
by stage, and overhead_fraction = 1 - torch time / total time.

    python bench/throughput.py [--cases 200] [--seed 0] [--backend eager] [--family F]
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from dynfuzz.generators import case_seed, draw_case  # noqa: E402
from dynfuzz.run.compilers import CompileSpec, make_compiler  # noqa: E402
from dynfuzz.run.judge import judge  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=200)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--backend", default="eager")
    parser.add_argument("--compiler", default="torch")
    parser.add_argument("--family", action="append")
    parser.add_argument("--warmup", type=int, default=5)
    args = parser.parse_args()
    spec = CompileSpec(compiler=args.compiler, backend=args.backend)
    compiler = make_compiler(spec)
    families = tuple(args.family or ())
    for i in range(args.warmup):  # first compiles in a process pay one-off import and cache costs
        judge(draw_case(case_seed(args.seed + 1, i), families), compiler, spec)
    stages: dict[str, list[float]] = {k: [] for k in ("generation", "eager", "compile", "compiled_run", "harness")}
    findings = 0
    start = time.perf_counter()
    torch_total = 0.0
    for i in range(args.cases):
        t = time.perf_counter()
        case = draw_case(case_seed(args.seed, i), families)
        stages["generation"].append(time.perf_counter() - t)
        result = judge(case, compiler, spec)
        findings += len(result.findings)
        torch_total += result.torch_seconds
        for k in ("eager", "compile", "compiled_run", "harness"):
            stages[k].append(result.timings[k])
    total = time.perf_counter() - start
    print(f"backend={args.backend} compiler={args.compiler} families={list(families) or 'all'} "
          f"cases={args.cases} seed={args.seed}")
    print(f"cases/s            {args.cases / total:8.2f}")
    print(f"total seconds      {total:8.2f}")
    print("median ms per case, by stage (harness = snapshots + oracles + exec of the program text):")
    for k, v in stages.items():
        print(f"  {k:16s} {1000 * statistics.median(v):8.3f}")
    print(f"overhead_fraction  {1 - torch_total / total:8.4f}   (1 - torch time / total time)")
    print(f"findings           {findings:8d}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
