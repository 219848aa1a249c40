"""Distinct bugs per hour: how a campaign's bug buckets grew over time, and how long each waited for its first
minimized report.

For each campaign folder: every bucket of `summary.json` by key, in the order it was first seen
(`first_seen_seconds`), with its tier, status and the seconds from first seen to its first minimized repro that
reproduces (`minimized_seconds`, written by dynfuzz since swarm testing; an older folder shows `?`). Then the
distinct bug buckets (miscompiles and crashes that are not flaky: `is_bug`) reached at a few points of the run,
and the totals. With several folders (the same seed and budget, `--swarm` and `--no-swarm`), one comparison line
each at the end.

    python3 bench/distinct.py OUT [OUT2 ...] [--json]
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from dynfuzz.triage.buckets import row_is_bug  # noqa: E402

CHECKPOINTS = (0.1, 0.25, 0.5, 0.75, 1.0)  # shares of the campaign's seconds at which bug buckets are counted


def distinct(summary: dict[str, Any]) -> dict[str, Any]:
    """The measure of one campaign's summary.json (see the module docstring)."""
    seconds = float(summary.get("seconds") or 0.0)
    rows = []
    for b in summary.get("buckets", []):
        first = b.get("first_seen_seconds")
        minimized = b.get("minimized_seconds")
        rows.append({"key": b.get("key"), "tier": b.get("tier"), "status": b.get("status"), "bug": row_is_bug(b),
                     "first_seen": first, "minimized": minimized,
                     "to_minimized": None if minimized is None or first is None else round(minimized - first, 3)})
    rows.sort(key=lambda r: (r["first_seen"] if r["first_seen"] is not None else float("inf"), r["key"] or ""))
    bugs = [r for r in rows if r["bug"]]
    curve = [{"seconds": round(share * seconds, 1),
              "bugs": sum(1 for r in bugs if r["first_seen"] is not None and r["first_seen"] <= share * seconds)}
             for share in CHECKPOINTS]
    waits = [r["to_minimized"] for r in bugs if r["to_minimized"] is not None]
    return {"torch": summary.get("torch"), "seed": summary.get("seed"), "swarm": summary.get("swarm", False),
            "cases": summary.get("cases"), "seconds": round(seconds, 1), "buckets": len(rows), "bugs": len(bugs),
            "bugs_minimized": sum(1 for r in bugs if r["minimized"] is not None),
            "bugs_ok": sum(1 for r in bugs if r["status"] == "ok"),
            "median_to_minimized": round(statistics.median(waits), 1) if waits else None,
            "queued": summary.get("queued"), "curve": curve, "rows": rows}


def _print(folder: Path, m: dict[str, Any]) -> None:
    print(f"== {folder}: torch {m['torch']}, seed {m['seed']}, swarm {'on' if m['swarm'] else 'off'}, "
          f"{m['cases']} cases in {m['seconds']} s, {m['buckets']} buckets, {m['bugs']} bug buckets")
    print(f"{'first seen s':>12} {'to minimized s':>14}  {'tier':10} {'status':11} key")
    for r in m["rows"]:
        first = "?" if r["first_seen"] is None else f"{r['first_seen']:.1f}"
        wait = ("?" if r["status"] == "ok" else "never") if r["to_minimized"] is None else f"{r['to_minimized']:.1f}"
        print(f"{first:>12} {wait:>14}  {r['tier'] or '?':10} {r['status'] or '?':11} {'*' if r['bug'] else ' '}"
              f"{r['key']}")
    print("bug buckets by time: " + ", ".join(f"{p['bugs']} at {p['seconds']} s" for p in m["curve"]))
    print(f"bug buckets minimized: {m['bugs_minimized']} of {m['bugs']} ({m['bugs_ok']} ok), median wait "
          f"{m['median_to_minimized']} s, jobs still queued {m['queued']}\n")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("dirs", nargs="+", metavar="DIR", help="campaign folders (each with a summary.json)")
    parser.add_argument("--json", action="store_true", help="print the measures as one JSON object")
    args = parser.parse_args(argv)
    measures = {}
    for d in args.dirs:
        path = Path(d) / "summary.json"
        try:
            measures[d] = distinct(json.loads(path.read_text()))
        except (OSError, ValueError) as e:
            print(f"distinct: {path}: {e}", file=sys.stderr)
            return 2
    if args.json:
        print(json.dumps(measures, indent=1))
        return 0
    for d, m in measures.items():
        _print(Path(d), m)
    if len(measures) > 1:
        for d, m in measures.items():
            print(f"{d}: swarm {'on ' if m['swarm'] else 'off'} {m['cases']} cases, {m['bugs']} bug buckets "
                  f"({m['bugs_minimized']} minimized), {m['buckets']} buckets")
    return 0


if __name__ == "__main__":
    sys.exit(main())
