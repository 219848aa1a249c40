"""Coverage-guided against unguided generation, same seed and number of cases, plus the cost of measuring.

Runs three campaigns as separate `dynfuzz fuzz` processes, each with `--no-db` (no replay) and the same
`--seed`, `--cases`, `--workers`:

- `plain`: no coverage, the baseline wall time;
- `coverage`: the unguided stream (the very same programs as `plain`) with `--coverage`;
- `guided`: `--guided` (which measures coverage too).

Prints total and per-file line coverage of torch/_dynamo (and of its reachable part, see
`dynfuzz.run.line_coverage.OUT_OF_REACH`), distinct feature-tag pairs, findings and buckets, and wall times
with their ratios: coverage/plain is the cost of measuring, guided/plain the cost of guiding.

    python bench/coverage.py [--cases 1000] [--seed 0] [--workers 1] [--family F] [--out DIR] [--json]
                             [--modes plain coverage guided] [--parallel]
"""
from __future__ import annotations

import argparse
import itertools
import json
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from dynfuzz.generators import case_seed, draw_case  # noqa: E402

MODES = {"plain": [], "coverage": ["--coverage"], "guided": ["--guided"]}
FILES = ("symbolic_convert.py", "side_effects.py", "guards.py", "output_graph.py", "bytecode_transformation.py",
         "variables/builder.py", "variables/functions.py", "variables/user_defined.py", "variables/dicts.py",
         "variables/lists.py", "variables/higher_order_ops.py", "variables/tensor.py", "variables/builtin.py")


def command(mode: str, args, out: Path) -> list[str]:
    return [sys.executable, "-m", "dynfuzz", "fuzz", "--cases", str(args.cases), "--seed", str(args.seed),
           "--workers", str(args.workers), "--budget", args.budget, "--no-db", "--no-progress", "--out", str(out),
           *MODES[mode], *[f"--family={f}" for f in args.family or ()]]


def collect(mode: str, args, out: Path) -> dict:
    summary = json.loads((out / "summary.json").read_text())
    coverage = json.loads((out / "coverage.json").read_text()) if (out / "coverage.json").exists() else None
    return {"summary": summary, "coverage": coverage, "pairs": len(tag_pairs(mode, args, out, summary["cases"]))}


def tag_pairs(mode: str, args, out: Path, cases: int) -> set[tuple[str, str]]:
    """Distinct pairs of feature tags that occur together in one case (of the `cases` the campaign ran)."""
    if mode == "guided":
        rows = [json.loads(line) for line in (out / "guided" / "cases.jsonl").read_text().splitlines()]
        tag_sets = [row["tags"] for row in rows]
    else:  # the unguided stream: the same programs the campaign drew
        families = tuple(args.family or ())
        tag_sets = [draw_case(case_seed(args.seed, i), families).tags for i in range(cases)]
    return {pair for tags in tag_sets for pair in itertools.combinations(sorted(tags), 2)}


def report(results: dict[str, dict], args) -> dict:
    def cov(mode: str, key: str):
        c = results[mode]["coverage"]
        return c[key]["percent"] if c and c.get(key) else None

    plain = results["plain"]["summary"]["seconds"] if "plain" in results else None
    rows = {}
    for mode, r in results.items():
        s = r["summary"]
        rows[mode] = {"cases": s["cases"], "seconds": s["seconds"],
                      "vs_plain": round(s["seconds"] / plain, 3) if plain else None,
                      "dynamo_percent": cov(mode, "totals"), "reachable_percent": cov(mode, "reachable"),
                      "tag_pairs": r["pairs"], "findings": s["findings"], "unique": s["unique"],
                      "buckets": s.get("bugs", s["unique"])}
    files = {}
    for name in FILES:
        rel = f"torch/_dynamo/{name}"
        files[rel] = {mode: r["coverage"]["files"].get(rel, {}).get("percent") for mode, r in results.items()
                      if r["coverage"]}
    return {"cases": args.cases, "seed": args.seed, "workers": args.workers, "modes": rows, "files": files,
            "guided_gain_points": (round(rows["guided"]["dynamo_percent"] - rows["coverage"]["dynamo_percent"], 2)
                                   if {"guided", "coverage"} <= set(rows) else None),
            "guided_vs_unguided_wall": (round(rows["guided"]["seconds"] / rows["coverage"]["seconds"], 3)
                                        if {"guided", "coverage"} <= set(rows) else None)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--budget", default="4h", help="per campaign; --cases normally ends it first")
    parser.add_argument("--family", action="append")
    parser.add_argument("--out", default=None, help="keep the three campaigns' folders here")
    parser.add_argument("--modes", nargs="+", choices=list(MODES), default=list(MODES))
    parser.add_argument("--parallel", action="store_true",
                        help="run the modes at the same time: on a shared machine their wall times then see the "
                             "same load (each gets its share of the cores)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    root = Path(args.out) if args.out else Path(tempfile.mkdtemp(prefix="dynfuzz-bench-coverage-"))
    procs = []
    for mode in args.modes:
        proc = subprocess.Popen(command(mode, args, root / mode), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        if not args.parallel:
            proc.wait()
        procs.append(proc)
    for proc in procs:
        proc.wait()
    results = {mode: collect(mode, args, root / mode) for mode in args.modes}
    out = report(results, args)
    if args.json:
        print(json.dumps(out, indent=1))
        return 0
    print(f"cases={args.cases} seed={args.seed} workers={args.workers} families={args.family or 'all'} (in {root})")
    print(f"{'mode':<12} {'seconds':>8} {'x plain':>8} {'dynamo %':>9} {'reach %':>8} {'pairs':>6} "
          f"{'findings':>9} {'buckets':>8}")
    for mode, r in out["modes"].items():
        print(f"{mode:<12} {r['seconds']:>8.1f} {r['vs_plain'] or '-':>8} {r['dynamo_percent'] or '-':>9} "
              f"{r['reachable_percent'] or '-':>8} {r['tag_pairs']:>6} {r['findings']:>9} {r['buckets']:>8}")
    print(f"guided - unguided: {out['guided_gain_points']} points of torch/_dynamo; wall time x"
          f"{out['guided_vs_unguided_wall']}")
    print(f"\n{'file (% of statements)':<45} {'coverage':>9} {'guided':>7}")
    for rel, by_mode in out["files"].items():
        print(f"{rel:<45} {by_mode.get('coverage') or 0:>9.1f} {by_mode.get('guided') or 0:>7.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
