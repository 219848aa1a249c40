"""Throughput of the whole per-case pipeline, in one process, on a fixed-seed set of cases.

A case is generated, run eagerly, compiled, run (twice by the default call
plan), snapshotted and judged. Prints cases/s, the median time per case split
by stage, and overhead_fraction = 1 - torch time / total time.

Then the cost of `--pristine-torch`: every case is judged a second time with torch as shipped (dynfuzz's two
speed-ups of Dynamo's logging off, harness/run/torch_compat.py), alternating which mode goes first so that
both see the same load, and the judge time of the two modes is compared (`--no-pristine` skips it).

    python bench/throughput.py [--cases 200] [--seed 0] [--backend eager] [--family F] [--no-pristine]
    python bench/throughput.py --behaviours-cost [--cases 200]

`--behaviours-cost` measures what recording Dynamo's behaviours costs (run/behaviours.py: its readers and
its count-only observers): every case is judged twice in this process, once recording and once with the
observers uninstalled, in alternating order, and cases/s of both and their ratio are printed (paired on the
same cases, and in CPU seconds of this process, so load from elsewhere on the machine hits neither).
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
from dynfuzz.run.torch_compat import set_speedups, speedup_states  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=200)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--backend", default="eager")
    parser.add_argument("--compiler", default="torch")
    parser.add_argument("--family", action="append")
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--behaviours-cost", action="store_true",
                        help="judge each case with and without behaviour recording; print both rates")
    parser.add_argument("--no-pristine", action="store_true", help="skip the pristine-torch comparison")
    args = parser.parse_args()
    if args.behaviours_cost:
        return behaviours_cost(args)
    spec = CompileSpec(compiler=args.compiler, backend=args.backend)
    compiler = make_compiler(spec)
    families = tuple(args.family or ())
    for i in range(args.warmup):  # first compiles in a process pay one-off import and cache costs
        judge(draw_case(case_seed(args.seed + 1, i), families), compiler, spec)
    stages: dict[str, list[float]] = {k: [] for k in ("generation", "eager", "compile", "compiled_run", "harness")}
    findings = 0
    start = time.perf_counter()
    torch_total = 0.0
    judge_seconds = {"patched": 0.0, "pristine": 0.0}
    for i in range(args.cases):
        t = time.perf_counter()
        case = draw_case(case_seed(args.seed, i), families)
        stages["generation"].append(time.perf_counter() - t)
        modes = ["patched"] if args.no_pristine else ["patched", "pristine"][:: 1 if i % 2 == 0 else -1]
        for mode in modes:
            set_speedups(mode == "patched")
            t = time.perf_counter()
            result = judge(case, compiler, spec)
            judge_seconds[mode] += time.perf_counter() - t
            if mode != "patched":
                continue
            findings += len(result.findings)
            torch_total += result.torch_seconds
            for k in ("eager", "compile", "compiled_run", "harness"):
                stages[k].append(result.timings[k])
    set_speedups(True)
    total = time.perf_counter() - start - judge_seconds["pristine"]
    print(f"backend={args.backend} compiler={args.compiler} families={list(families) or 'all'} "
          f"cases={args.cases} seed={args.seed}")
    print(f"cases/s            {args.cases / total:8.2f}")
    print(f"total seconds      {total:8.2f}")
    print("median ms per case, by stage (harness = snapshots + oracles + exec of the program text):")
    for k, v in stages.items():
        print(f"  {k:16s} {1000 * statistics.median(v):8.3f}")
    print(f"overhead_fraction  {1 - torch_total / total:8.4f}   (1 - torch time / total time)")
    print(f"findings           {findings:8d}")
    if not args.no_pristine:
        patched, pristine = judge_seconds["patched"], judge_seconds["pristine"]
        print(f"speed-ups          {speedup_states()}")
        print(f"judge ms/case      {1000 * patched / args.cases:8.1f} patched, "
              f"{1000 * pristine / args.cases:.1f} pristine (--pristine-torch)")
        print(f"pristine cost      {100 * (pristine / patched - 1):+7.1f}% time per case "
              f"({100 * (1 - patched / pristine):.1f}% less throughput than patched)")
    return 0


def behaviours_cost(args) -> int:
    """Cases/s with and without behaviour recording, paired per case: each case is judged once to warm up
    (a first use of an op or a higher-order op pays one-off imports and registrations) and then four times,
    on, off, off, on for even cases and off, on, on, off for odd ones (which cancels a load that drifts);
    the faster run each way counts. Also times `collect()` alone (the counters and guard trees read again
    after the case: what recording adds besides the observers)."""
    import contextlib
    import io

    import torch
    from dynfuzz.run import torch_observers
    from dynfuzz.run.behaviours import collect

    torch.set_num_threads(1)  # idle intra-op threads spin on a busy machine, and their CPU time is noise here
    spec = CompileSpec(compiler=args.compiler, backend=args.backend)
    compiler = make_compiler(spec)
    families = tuple(args.family or ())
    for i in range(args.warmup):
        judge(draw_case(case_seed(args.seed + 1, i), families), compiler, spec)
    best = {True: 0.0, False: 0.0}  # per case, the faster of its two runs each way: robust to interference
    per_case, sizes, reading = [], [], []
    for i in range(args.cases):
        case = draw_case(case_seed(args.seed, i), families)
        spent: dict[bool, list[float]] = {True: [], False: []}
        with contextlib.redirect_stdout(io.StringIO()):
            judge(case, compiler, spec)
        for on in ((True, False, False, True) if i % 2 == 0 else (False, True, True, False)):
            torch_observers.install() if on else torch_observers.uninstall()
            t = time.process_time()  # this process's CPU time: what other processes on the machine do not move
            with contextlib.redirect_stdout(io.StringIO()):  # programs may print
                result = judge(case, compiler, spec)
            spent[on].append(time.process_time() - t)
            if on:
                sizes.append(len(result.behaviours))
                t = time.process_time()
                collect()
                reading.append(time.process_time() - t)
        for on in spent:
            best[on] += min(spent[on])
        per_case.append(min(spent[True]) / min(spent[False]))
    torch_observers.install()
    on, off = args.cases / best[True], args.cases / best[False]
    print(f"backend={args.backend} families={list(families) or 'all'} cases={args.cases} seed={args.seed}")
    print(f"cases per CPU second, recording behaviours   {on:8.3f}")
    print(f"cases per CPU second, without                {off:8.3f}")
    print(f"cost                                         {100 * (1 - on / off):7.2f}% of cases/s")
    print(f"cost, median case                            {100 * (1 - 1 / statistics.median(per_case)):7.2f}%")
    print(f"reading a case's behaviours (collect)        {1000 * statistics.mean(reading):8.2f} ms mean, "
          f"{100 * statistics.mean(reading) * on:.2f}% of a case")
    print(f"behaviours per case (median)                 {statistics.median(sizes):8.0f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
