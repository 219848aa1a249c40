"""Benchmark a campaign's triage job (`triage_one`: minimize, explain, triangulate, verify) over double and
real findings: minimized program size, job time and where it goes (seconds and judge calls per phase).

Targets: median minimized repro at most 15 non-blank program lines (`PROGRAM` only: the checker appended to
every repro is not counted), median job time at most 60 s on backend eager; the median and 90th percentile
job time are printed so that a change to triage is compared on the same findings.

    python3 bench/minimize.py --per-double 2 --budget 60 --real /tmp/campaign --json bench-minimize.json

`--real` takes a campaign folder (the first example of each bucket, `findings/*/examples/*.py`) or a folder
of programs.
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from dynfuzz.campaign.campaign import Campaign, CampaignConfig  # noqa: E402
from dynfuzz.doubles import DOUBLES  # noqa: E402
from dynfuzz.errors import UsageError  # noqa: E402
from dynfuzz.run.compilers import CompileSpec, make_compiler, quiet_torch_logs  # noqa: E402
from dynfuzz.triage.minimize import program_lines  # noqa: E402
from dynfuzz.triage.phases import ORDER  # noqa: E402
from dynfuzz.triage.repro import read_program  # noqa: E402


def double_findings(name: str, per_double: int, cases: int, seed: int) -> list[Path]:
    """Run a short inline campaign against one double and return up to `per_double` saved findings."""
    out = Path(tempfile.mkdtemp(prefix=f"bench-min-{name}-"))
    config = CampaignConfig(budget=60, out=out, seed=seed, spec=CompileSpec(compiler=name), workers=0,
                            max_cases=cases, progress=False)
    Campaign(config).run()
    return programs_in(out)[:per_double]


def programs_in(folder: Path) -> list[Path]:
    """The first example of each bucket of a campaign folder, else every program directly in `folder`."""
    buckets = sorted((folder / "findings").glob("*/examples"))
    if buckets:
        return [p for b in buckets for p in sorted(b.glob("*.py"))[:1]]
    return sorted(folder.glob("*.py"))


def measure(path: Path, spec: CompileSpec, budget: float) -> dict:
    """One triage job on the saved program at `path`, as a campaign's triage lane runs it."""
    from dynfuzz.triage.minimize import choose_target
    from dynfuzz.triage.queue import triage_one

    try:
        saved = read_program(path)
        _, finding = choose_target(saved.case, make_compiler(spec), spec, saved.meta.get("signature"))
    except UsageError as e:  # unreadable, or the saved finding no longer reproduces
        return {"file": str(path), "compiler": spec.compiler, "error": str(e)}
    t = triage_one(saved.case, finding, spec, budget)
    return {"file": str(path), "compiler": spec.compiler, "oracle": finding.oracle,
            "before": program_lines(saved.case.source), "lines": program_lines(t.case.source),
            "seconds": round(t.seconds, 2), "verdict": t.verdict, "key": t.explanation.key, **t.phases}


def percentile(values: list[float], q: float) -> float | None:
    """The q-quantile by nearest rank (None for no values)."""
    if not values:
        return None
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * len(ordered) + 0.5) - 1))]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--per-double", type=int, default=4)
    ap.add_argument("--cases", type=int, default=40, help="campaign cases per double")
    ap.add_argument("--budget", type=float, default=60.0, help="minimization budget per finding (s)")
    ap.add_argument("--real", action="append", default=[], help="folder of real torch findings (repeatable)")
    ap.add_argument("--max-real", type=int, default=12)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--json", default=None)
    args = ap.parse_args()
    quiet_torch_logs()
    rows = []
    for name in sorted(n for n in DOUBLES if n != "identity" and args.per_double > 0):
        for path in double_findings(name, args.per_double, args.cases, args.seed):
            rows.append(measure(path, CompileSpec(compiler=name), args.budget))
            print(json.dumps(rows[-1]), flush=True)
    real = [p for d in args.real for p in programs_in(Path(d))][:args.max_real]
    for path in real:
        rows.append(measure(path, CompileSpec(compiler="torch"), args.budget))
        print(json.dumps(rows[-1]), flush=True)
    done = [r for r in rows if "lines" in r]
    summary = {
        "findings": len(done), "not_reproduced": len(rows) - len(done),
        "median_lines": statistics.median(r["lines"] for r in done) if done else None,
        "median_seconds": statistics.median(r["seconds"] for r in done) if done else None,
        "p90_seconds": percentile([r["seconds"] for r in done], 0.9),
        "max_seconds": max((r["seconds"] for r in done), default=None),
        "phase_seconds_median": {name: statistics.median(r["seconds_by_phase"].get(name, 0) for r in done)
                                 for name in ORDER if any(name in r["seconds_by_phase"] for r in done)},
        "phase_calls_median": {name: statistics.median(r["calls_by_phase"].get(name, 0) for r in done)
                               for name in ORDER if any(name in r["calls_by_phase"] for r in done)},
        "by_compiler": {c: {"n": len(g), "median_lines": statistics.median(r["lines"] for r in g),
                            "median_seconds": statistics.median(r["seconds"] for r in g)}
                        for c in sorted({r["compiler"] for r in done})
                        for g in [[r for r in done if r["compiler"] == c]]},
        "counted": "non-blank lines of the minimized PROGRAM (checker excluded)",
    }
    print(json.dumps(summary, indent=2))
    if args.json:
        Path(args.json).write_text(json.dumps({"summary": summary, "rows": rows}, indent=2) + "\n")
    ok = done and summary["median_lines"] <= 15 and summary["median_seconds"] <= 60
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
