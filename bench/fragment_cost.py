"""What each fragment costs: the marginal seconds per case it adds, fitted over a fixed-seed set of cases.

The default mix's cases/s is set by which fragments it draws and how often. Each case is generated
(recording the fragments it drew), judged in this process as `bench/throughput.py` does, and the
per-case time is fitted by least squares as a sum of one cost per fragment drawn plus a constant.
Prints the fragments by their share of the campaign's time (marginal cost x times drawn), and each
family's share of draws and of time: the figures to weigh a new construct's weight against.

    python bench/fragment_cost.py [--cases 600] [--seed 0] [--family F] [--top 25] [--since REV]

`--since REV` (a git revision of this checkout) also splits the time between the fragments REV's generators
already had and those added after it (by name, read from REV's sources without importing them): how much of a
case's time the constructs added since REV buy, and the mean time of the cases that drew none of them.
"""
from __future__ import annotations

import argparse
import ast
import contextlib
import io
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from dynfuzz.generators import case_seed, draw_case, load_families  # noqa: E402
from dynfuzz.generators.case import case_from_program  # noqa: E402
from dynfuzz.generators.choose import choose  # noqa: E402
from dynfuzz.generators.compose import programs  # noqa: E402
from dynfuzz.generators.hypothesis_compat import data_from_seed  # noqa: E402
from dynfuzz.run.compilers import CompileSpec, make_compiler  # noqa: E402
from dynfuzz.run.judge import judge  # noqa: E402


def draw_recording(seed: int, families: tuple[str, ...]):
    """The case `draw_case(seed, families)` gives, and the (family, fragment) names it drew, in order."""
    picked: list[tuple[str, str]] = []

    def picker(draw, table):
        option = choose(draw, table)
        if hasattr(option, "family"):  # the picker also sees snippet pools and Dynamo settings (Builder.pick)
            picked.append((option.family, option.name))
        return option

    data = data_from_seed(seed)
    program = data.draw(programs(families, picker=picker))
    return case_from_program(program, seed=seed, families=families, choices=tuple(data.choices)), picked


def fit(rows: list[Counter], seconds: list[float]) -> tuple[dict, float]:
    """Least-squares cost per fragment (non-negative after clipping) and the constant per case."""
    names = sorted({n for r in rows for n in r})
    x = np.array([[r.get(n, 0) for n in names] + [1] for r in rows], dtype=float)
    coef, *_ = np.linalg.lstsq(x, np.array(seconds), rcond=None)
    return {n: max(float(c), 0.0) for n, c in zip(names, coef[:-1])}, float(coef[-1])


def fragment_names_at(rev: str) -> set[str]:
    """Names of the fragments the generators of git revision `rev` register: functions decorated with
    `@fragment(...)` and `Fragment("name", ...)` calls, read from the sources with ast."""
    root = Path(__file__).resolve().parent.parent
    files = subprocess.run(["git", "ls-tree", "-r", "--name-only", rev, "generators"], cwd=root, check=True,
                           capture_output=True, text=True).stdout.split()
    names: set[str] = set()
    for path in (f for f in files if f.endswith(".py")):
        source = subprocess.run(["git", "show", f"{rev}:{path}"], cwd=root, check=True, capture_output=True,
                                text=True).stdout
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.FunctionDef) and any(
                    isinstance(d, ast.Call) and getattr(d.func, "id", None) == "fragment" for d in node.decorator_list):
                names.add(node.name)
            elif (isinstance(node, ast.Call) and getattr(node.func, "id", None) == "Fragment" and node.args
                  and isinstance(node.args[0], ast.Constant)):
                names.add(node.args[0].value)
    return names


def print_since(rev: str, rows: list[Counter], seconds: list[float], cost: dict, total: float) -> None:
    """The `--since REV` split (see the module docstring)."""
    old = fragment_names_at(rev)
    new = sorted({k for r in rows for k in r if k[1] not in old})
    with_new = [s for r, s in zip(rows, seconds) if any(k in r for k in new)]
    without = [s for r, s in zip(rows, seconds) if not any(k in r for k in new)]
    print(f"\nsince {rev}: {len(new)} fragments drawn here are new; {len(with_new)} of {len(rows)} cases drew one")
    for fam, name in new:
        drawn = sum(r.get((fam, name), 0) for r in rows)
        print(f"  {fam + '/' + name:42s} drawn {drawn:5d}  s each {cost.get((fam, name), 0.0):.3f}  "
              f"time {100 * cost.get((fam, name), 0.0) * drawn / total:5.1f}%")
    mean = total / len(rows)
    if without:
        print(f"mean s/case: all {mean:.3f}, cases with a new fragment {sum(with_new) / max(len(with_new), 1):.3f}, "
              f"cases with none {sum(without) / len(without):.3f} ({sum(without) / len(without) / mean:.2f}x all)")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=600)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--backend", default="eager")
    parser.add_argument("--family", action="append")
    parser.add_argument("--top", type=int, default=25)
    parser.add_argument("--since", metavar="REV", help="split the time between fragments REV had and newer ones")
    args = parser.parse_args()
    load_families()
    families = tuple(args.family or ())
    spec = CompileSpec(backend=args.backend)
    compiler = make_compiler(spec)
    for i in range(5):  # one-off import and cache costs
        judge(draw_case(case_seed(args.seed + 1, i), families), compiler, spec)
    rows, seconds = [], []
    start = time.perf_counter()
    for i in range(args.cases):
        t = time.perf_counter()
        case, picked = draw_recording(case_seed(args.seed, i), families)
        with contextlib.redirect_stdout(io.StringIO()):  # programs print; the figures go to stdout
            judge(case, compiler, spec)
        seconds.append(time.perf_counter() - t)
        rows.append(Counter(picked))
    total = time.perf_counter() - start
    cost, base = fit(rows, seconds)
    drawn = Counter()
    for r in rows:
        drawn.update(r)
    print(f"families={list(families) or 'all'} cases={args.cases} seed={args.seed} backend={args.backend}")
    print(f"cases/s {args.cases / total:.2f}   mean s/case {total / args.cases:.3f}   constant s/case {base:.3f}")
    share = {n: cost[n] * drawn[n] / total for n in cost}
    print(f"\n{'family/fragment':44s} {'drawn':>6s} {'s each':>8s} {'time %':>7s}")
    for (fam, name), s in sorted(share.items(), key=lambda kv: -kv[1])[:args.top]:
        print(f"{fam + '/' + name:44s} {drawn[(fam, name)]:6d} {cost[(fam, name)]:8.3f} {100 * s:6.1f}%")
    print(f"\n{'family':16s} {'draws %':>8s} {'time %':>7s} {'s per draw':>10s}")
    n_draws = sum(drawn.values())
    for fam in sorted({f for f, _ in drawn}):
        d = sum(v for (f, _), v in drawn.items() if f == fam)
        s = sum(v for (f, _), v in share.items() if f == fam)
        print(f"{fam:16s} {100 * d / n_draws:7.1f}% {100 * s:6.1f}% "
              f"{sum(cost[k] * drawn[k] for k in cost if k[0] == fam) / d:10.3f}")
    if args.since:
        print_since(args.since, rows, seconds, cost, total)
    return 0


if __name__ == "__main__":
    sys.exit(main())
