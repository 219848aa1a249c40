"""Generation cost per case, per family: drawing the IR from a seed and rendering it to source.

    python bench/generation.py [--cases 500] [--seed 0]

Prints the median and 90th percentile in milliseconds of wall and CPU time (target: median < 5 ms).
CPU time is printed too because wall time inflates on a loaded machine.
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from dynfuzz.generators import case_seed, draw_case, family_names  # noqa: E402


def measure(family: tuple[str, ...], cases: int, seed: int) -> tuple[list[float], list[float]]:
    wall, cpu = [], []
    for i in range(cases):
        w, c = time.perf_counter(), time.process_time()
        draw_case(case_seed(seed, i), family)
        wall.append((time.perf_counter() - w) * 1000)
        cpu.append((time.process_time() - c) * 1000)
    return wall, cpu


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=500)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    draw_case(0)  # imports and strategy caches
    header = f"{'family':10s} {'wall median':>12s} {'wall p90':>9s} {'cpu median':>11s}"
    print(f"{header}   (ms per case, {args.cases} cases)")
    for name in [*family_names(), "all"]:
        family = () if name == "all" else (name,)
        wall, cpu = measure(family, args.cases, args.seed)
        p90 = statistics.quantiles(wall, n=10)[-1]
        print(f"{name:10s} {statistics.median(wall):12.3f} {p90:9.3f} {statistics.median(cpu):11.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
