"""Benchmark `dynfuzz minimize`: minimized program size and time over double and real findings.

Targets (issue 7): median minimized repro at most 15 non-blank program lines
(`PROGRAM` only: the checker appended to every repro is not counted) and
median minimization time at most 60 s, on backend eager.

    python3 bench/minimize.py --per-double 4 --budget 60 --real /tmp/real/findings --json bench-minimize.json
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from dynfuzz.doubles import DOUBLES  # noqa: E402
from dynfuzz.errors import UsageError  # noqa: E402
from dynfuzz.run.campaign import Campaign, CampaignConfig  # noqa: E402
from dynfuzz.run.compilers import CompileSpec, quiet_torch_logs  # noqa: E402
from dynfuzz.triage.minimize import minimize_file, program_lines  # noqa: E402
from dynfuzz.triage.repro import read_program  # noqa: E402


def double_findings(name: str, per_double: int, cases: int, seed: int) -> list[Path]:
    """Run a short inline campaign against one double and return up to `per_double` saved findings."""
    out = Path(tempfile.mkdtemp(prefix=f"bench-min-{name}-"))
    config = CampaignConfig(budget=60, out=out, seed=seed, spec=CompileSpec(compiler=name), workers=0,
                            max_cases=cases, progress=False)
    Campaign(config).run()
    return sorted((out / "findings").glob("*.py"))[:per_double]


def measure(path: Path, spec: CompileSpec, budget: float) -> dict:
    out = Path(tempfile.mkdtemp(prefix="bench-min-out-")) / path.name
    try:
        saved = read_program(path)
        m, _ = minimize_file(saved, spec, budget, out)
    except UsageError as e:  # unreadable, or the saved finding no longer reproduces
        return {"file": str(path), "compiler": spec.compiler, "error": str(e)}
    return {"file": str(path), "compiler": spec.compiler, "oracle": m.finding.oracle,
            "before": program_lines(saved.case.source), "out": str(out), "lines": m.lines,
            "seconds": round(m.seconds, 2),
            "stage1": m.stage1, "tests": m.reduce.tests if m.reduce else 0}


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
    for name in sorted(n for n in DOUBLES if n != "identity"):
        for path in double_findings(name, args.per_double, args.cases, args.seed):
            rows.append(measure(path, CompileSpec(compiler=name), args.budget))
            print(json.dumps(rows[-1]), flush=True)
    real = [p for d in args.real for p in sorted(Path(d).glob("*.py"))][:args.max_real]
    for path in real:
        rows.append(measure(path, CompileSpec(compiler="torch"), args.budget))
        print(json.dumps(rows[-1]), flush=True)
    done = [r for r in rows if "lines" in r]
    summary = {
        "findings": len(done), "not_reproduced": len(rows) - len(done),
        "median_lines": statistics.median(r["lines"] for r in done) if done else None,
        "median_seconds": statistics.median(r["seconds"] for r in done) if done else None,
        "max_seconds": max((r["seconds"] for r in done), default=None),
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
