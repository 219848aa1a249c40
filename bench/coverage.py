"""Behaviour-guided against unguided generation: distinct Dynamo behaviours at the same number of cases, wall
time, and (as a separate measurement) line coverage of torch/_dynamo.

Each campaign is a separate `dynfuzz fuzz` process with `--no-db` (no replay), `--cases`, `--workers`:

- `unguided`: the deterministic stream of `--seed`, no line measurement;
- `guided`: `--guided`, no line measurement;
- `coverage`, `guided-coverage`: the same two with `--coverage` (with `--lines`, seed 0 only), for
  line coverage of torch/_dynamo and of its reachable part (`dynfuzz.campaign.line_coverage.OUT_OF_REACH`).

Prints, per seed and as medians over the seeds, distinct behaviours (singles and pairs, summary.json's
`behaviours` block) and wall seconds, with the guided/unguided ratios; `--parallel` runs a seed's
campaigns at the same time, so on a shared machine both see the same load and their ratio is fair.
`--curves PNG` draws behaviours against cases for every campaign (matplotlib).

    python bench/coverage.py [--cases 1000] [--seeds 0 1 2] [--workers 2] [--modes unguided guided]
                             [--lines] [--parallel] [--curves docs/behaviour-curves.png] [--out DIR] [--json]
"""
from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

MODES = {"unguided": [], "guided": ["--guided"], "coverage": ["--coverage"],
         "guided-coverage": ["--guided", "--coverage"]}
FILES = ("symbolic_convert.py", "side_effects.py", "guards.py", "output_graph.py", "bytecode_transformation.py",
         "variables/builder.py", "variables/functions.py", "variables/user_defined.py", "variables/dicts.py",
         "variables/lists.py", "variables/higher_order_ops.py", "variables/tensor.py", "variables/builtin.py")


def command(mode: str, seed: int, args, out: Path) -> list[str]:
    return [sys.executable, "-m", "dynfuzz", "fuzz", "--cases", str(args.cases), "--seed", str(seed),
            "--workers", str(args.workers), "--budget", args.budget, "--no-db", "--no-progress", "--no-minimize",
            "--out", str(out), *MODES[mode], *[f"--family={f}" for f in args.family or ()]]


def run_all(runs: list[tuple[str, int]], args, root: Path) -> None:
    """Run the campaigns; with --parallel a seed's unguided and guided ones at the same time (and its two line
    measurements at the same time, apart from them)."""
    groups: dict[tuple[int, bool], list[str]] = {}
    for mode, seed in runs:
        groups.setdefault((seed, "coverage" in mode), []).append(mode)
    for (seed, _), modes in groups.items():
        procs = []
        for mode in modes:
            out = root / f"{mode}-{seed}"
            proc = subprocess.Popen(command(mode, seed, args, out), stdout=subprocess.DEVNULL,
                                    stderr=subprocess.DEVNULL)
            if not args.parallel:
                proc.wait()
            procs.append(proc)
        for proc in procs:
            proc.wait()


def collect(out: Path) -> dict:
    summary = json.loads((out / "summary.json").read_text())
    coverage = json.loads((out / "coverage.json").read_text()) if (out / "coverage.json").exists() else None
    b = summary.get("behaviours", {})
    return {"cases": summary["cases"], "seconds": summary["seconds"], "singles": b.get("distinct"),
            "pairs": b.get("pairs"), "universe_reached": b.get("universe_reached"),
            "universe_reachable": b.get("universe_reachable"), "by_category": b.get("by_category"),
            "timeline": b.get("timeline", []), "buckets": summary.get("bugs", summary["unique"]),
            "dynamo_percent": (coverage or {}).get("totals", {}).get("percent"),
            "reachable_percent": (coverage or {}).get("reachable", {}).get("percent"),
            "files": {name: (coverage or {}).get("files", {}).get(f"torch/_dynamo/{name}", {}).get("percent")
                      for name in FILES} if coverage else {}}


def ratios(results: dict[str, dict[int, dict]], seeds: list[int]) -> dict:
    """Guided over unguided, per seed and the median, for singles, pairs and wall seconds."""
    out: dict = {"per_seed": {}, "median": {}}
    if not {"guided", "unguided"} <= set(results):
        return out
    for key in ("singles", "pairs", "seconds"):
        per = {s: round(results["guided"][s][key] / results["unguided"][s][key], 3) for s in seeds
               if results["guided"].get(s, {}).get(key) and results["unguided"].get(s, {}).get(key)}
        out["per_seed"][key] = per
        out["median"][key] = round(statistics.median(per.values()), 3) if per else None
    return out


def draw_curves(results: dict[str, dict[int, dict]], path: Path, cases: int) -> None:
    """Distinct behaviours against cases, one line per campaign (guided solid, unguided dashed)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4.2))
    colours = ["tab:blue", "tab:orange", "tab:green", "tab:red", "tab:purple"]
    for mode, style in (("unguided", "--"), ("guided", "-")):
        for i, (seed, r) in enumerate(sorted(results.get(mode, {}).items())):
            points = [(0, 0)] + [(p[0], p[2]) for p in r["timeline"]] + [(r["cases"], r["singles"])]
            ax.step([p[0] for p in points], [p[1] for p in points], style, where="post",
                    color=colours[i % len(colours)], label=f"{mode}, seed {seed}")
    ax.set_xlabel("cases")
    ax.set_ylabel("distinct behaviours")
    ax.set_xlim(0, cases)
    ax.set_title("Distinct Dynamo behaviours against cases")
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=1000)
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--budget", default="4h", help="per campaign; --cases normally ends it first")
    parser.add_argument("--family", action="append")
    parser.add_argument("--modes", nargs="+", choices=["unguided", "guided"], default=["unguided", "guided"])
    parser.add_argument("--lines", action="store_true",
                        help="also measure line coverage (seed 0, unguided and guided, with --coverage)")
    parser.add_argument("--parallel", action="store_true",
                        help="run a seed's campaigns at the same time (same load on a shared machine)")
    parser.add_argument("--curves", type=Path, help="write behaviours against cases as a PNG here")
    parser.add_argument("--out", default=None, help="keep the campaigns' folders here")
    parser.add_argument("--reuse", action="store_true", help="read campaigns already in --out, run nothing")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    root = Path(args.out) if args.out else Path(tempfile.mkdtemp(prefix="dynfuzz-bench-coverage-"))
    runs = [(m, s) for s in args.seeds for m in args.modes]
    if args.lines:
        runs += [("coverage", args.seeds[0]), ("guided-coverage", args.seeds[0])]
    if not args.reuse:
        run_all(runs, args, root)
    results: dict[str, dict[int, dict]] = {}
    for mode, seed in runs:
        results.setdefault(mode, {})[seed] = collect(root / f"{mode}-{seed}")
    report = {"cases": args.cases, "workers": args.workers, "seeds": args.seeds, "folder": str(root),
              "runs": {m: {s: {k: v for k, v in r.items() if k != "timeline"} for s, r in by.items()}
                       for m, by in results.items()},
              "guided_over_unguided": ratios(results, args.seeds)}
    if args.curves:
        draw_curves(results, args.curves, args.cases)
    if args.json:
        print(json.dumps(report, indent=1))
        return 0
    print(f"cases={args.cases} workers={args.workers} seeds={args.seeds} families={args.family or 'all'} "
          f"(in {root})")
    print(f"{'mode':<16} {'seed':>4} {'cases':>6} {'seconds':>8} {'singles':>8} {'pairs':>8} {'universe':>9} "
          f"{'dynamo %':>9} {'reach %':>8} {'buckets':>8}")
    for mode, by in results.items():
        for seed, r in sorted(by.items()):
            print(f"{mode:<16} {seed:>4} {r['cases']:>6} {r['seconds']:>8.1f} {r['singles'] or '-':>8} "
                  f"{r['pairs'] or '-':>8} {r['universe_reached'] or '-':>9} {r['dynamo_percent'] or '-':>9} "
                  f"{r['reachable_percent'] or '-':>8} {r['buckets']:>8}")
    for mode in args.modes:
        by = results[mode]
        print(f"median {mode:<9} singles {statistics.median(r['singles'] for r in by.values())}  pairs "
              f"{statistics.median(r['pairs'] for r in by.values())}  seconds "
              f"{statistics.median(r['seconds'] for r in by.values()):.1f}")
    med = report["guided_over_unguided"]["median"]
    if med:
        print(f"guided / unguided (median of per-seed ratios): singles x{med['singles']}  pairs x{med['pairs']}  "
              f"wall time x{med['seconds']}")
    if args.lines:
        print(f"\n{'file (% of statements)':<40} {'unguided':>9} {'guided':>7}")
        for name in FILES:
            u = results["coverage"][args.seeds[0]]["files"].get(name) or 0
            g = results["guided-coverage"][args.seeds[0]]["files"].get(name) or 0
            print(f"torch/_dynamo/{name:<26} {u:>9.1f} {g:>7.1f}")
    if args.curves:
        print(f"curves: {args.curves}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
