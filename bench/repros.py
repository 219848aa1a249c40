"""Are a campaign's minimized repros what PyTorch's issue triage accepts: short, and failing on their own?

For each campaign folder, every bucket whose repro is minimized (`status` ok or unexplained): its size as
PyTorch's triage counts it (`repro_meta.code_lines`: non-blank lines that are neither comments nor imports),
and its exit status when run as a plain script in a fresh process, with `--python` (the torch it was found
on) and a 120 s limit, from a scratch folder. Targets: median at most 20 lines, maximum 30, at least 95% exit 1.

    python3 bench/repros.py OUT [OUT2 ...] --python /path/to/venv/bin/python [--no-run] [--json FILE]

Prints one row per repro (lines, exit status, seconds, key), the buckets over 30 lines, and per folder the
median and maximum size and the fraction that exit 1.
"""
from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from dynfuzz.triage.repro_meta import code_lines

LIMIT = 120.0
MINIMIZED = ("ok", "unexplained")  # a bucket whose repro is minimized (explained or not)


def run_repro(python: str, repro: Path, limit: float = LIMIT) -> tuple[int | None, float]:
    """The script's exit status in a fresh process (None: it ran past `limit`) and its seconds."""
    with tempfile.TemporaryDirectory(prefix="dynfuzz-repro-") as tmp:
        copy = Path(tmp) / "repro.py"
        shutil.copyfile(repro, copy)
        start = time.monotonic()
        try:
            done = subprocess.run([python, str(copy)], cwd=tmp, capture_output=True, timeout=limit)
        except subprocess.TimeoutExpired:
            return None, time.monotonic() - start
        return done.returncode, time.monotonic() - start


def measure(folder: Path, python: str | None) -> list[dict]:
    """One row per minimized bucket of the campaign in `folder`."""
    summary = json.loads((folder / "summary.json").read_text())
    rows = []
    for bucket in summary.get("buckets", []):
        repro = folder / str(bucket.get("repro") or "")
        if bucket.get("status") not in MINIMIZED or not repro.is_file():
            continue
        row = {"key": bucket["key"], "tier": bucket.get("tier"), "lines": code_lines(repro.read_text()),
               "repro": str(repro), "exit": None, "seconds": None}
        if python:
            row["exit"], row["seconds"] = run_repro(python, repro)
        rows.append(row)
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folders", nargs="+", type=Path)
    parser.add_argument("--python", help="the interpreter (with the campaign's torch) that runs each repro")
    parser.add_argument("--no-run", action="store_true", help="sizes only")
    parser.add_argument("--json", type=Path, help="write every row here")
    args = parser.parse_args(argv)
    if not args.no_run and not args.python:
        parser.error("--python is required unless --no-run")
    everything = {}
    for folder in args.folders:
        rows = measure(folder, None if args.no_run else args.python)
        everything[str(folder)] = rows
        print(f"== {folder}: {len(rows)} minimized buckets")
        for r in sorted(rows, key=lambda r: -r["lines"]):
            ran = "" if r["exit"] is None and r["seconds"] is None else \
                f"exit {'timeout' if r['exit'] is None else r['exit']:>7} {r['seconds']:6.1f}s"
            print(f"  {r['lines']:4d} lines  {ran}  {r['tier']}: {r['key'][:100]}")
        if not rows:
            continue
        sizes = [r["lines"] for r in rows]
        line = f"  size median {statistics.median(sizes):g}, max {max(sizes)}, over 30: " \
               f"{sum(s > 30 for s in sizes)}/{len(sizes)}"
        if not args.no_run:
            ones = sum(r["exit"] == 1 for r in rows)
            line += f"; exit 1 within {LIMIT:g} s: {ones}/{len(rows)} ({ones / len(rows):.0%})"
        print(line)
    if args.json:
        args.json.write_text(json.dumps(everything, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
