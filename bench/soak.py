"""Soak test: run one campaign for a long time and report whether it stayed healthy.

    pip install -e ".[bench]"  # psutil
    python bench/soak.py --budget 1h --workers 2 [--window 10m] [--out DIR] [-- extra fuzz flags]

Prints (and writes to OUT/soak.json): the campaign's exit code (a death is anything but 0 or a clean
signal stop), harness errors by kind, crashes and hangs, the resident memory of the parent and of the
workers sampled every 10 s (growth from the first to the last quarter, must stay under 20%), and
cases/s per window (decay from the first to the last full window, must stay under 20%).
"""
from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

import psutil
from dynfuzz.budget import parse_duration


def _rss(proc: psutil.Process) -> tuple[int, int]:
    """(parent RSS, largest worker RSS) in bytes; workers are the parent's direct children."""
    try:
        parent = proc.memory_info().rss
        kids = [c.memory_info().rss for c in proc.children() if c.is_running()]
    except psutil.Error:
        return 0, 0
    return parent, max(kids, default=0)


WARM_UP = 12  # samples (2 minutes) left out of memory growth: workers importing torch and compiling their first cases


def _growth(series: list[int]) -> float:
    """Relative growth of the mean of the last quarter over the first quarter of a series (after WARM_UP)."""
    series = series[WARM_UP:] if len(series) > 4 * WARM_UP else series
    q = max(len(series) // 4, 1)
    first, last = statistics.mean(series[:q]), statistics.mean(series[-q:])
    return round(last / first - 1, 4) if first else 0.0


def soak(budget: float, workers: int, window: float, out: Path, extra: list[str]) -> dict:
    out.mkdir(parents=True, exist_ok=True)
    cmd = [sys.executable, "-m", "dynfuzz", "fuzz", "--budget", f"{budget}s", "--workers", str(workers),
           "--out", str(out / "campaign"), "--no-progress", "--no-db", *extra]
    log = open(out / "campaign.log", "w")
    proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT)
    ps = psutil.Process(proc.pid)
    samples = []  # (seconds, cases, parent rss, worker rss)
    loads = []  # 1-minute load average at each sample: how quiet the machine was, window by window
    start = time.monotonic()
    while proc.poll() is None:
        time.sleep(10)
        summary_path = out / "campaign" / "summary.json"
        try:
            cases = json.loads(summary_path.read_text())["cases"]
        except (OSError, ValueError, KeyError):
            cases = samples[-1][1] if samples else 0
        samples.append((round(time.monotonic() - start, 1), cases, *_rss(ps)))
        loads.append(psutil.getloadavg()[0])
    summary = json.loads((out / "campaign" / "summary.json").read_text())
    rates, window_loads = [], []
    t0, c0, i0 = 0.0, 0, 0
    for i, (t, c, *_) in enumerate(samples):
        if t - t0 >= window:
            rates.append(round((c - c0) / (t - t0), 3))
            window_loads.append(round(statistics.mean(loads[i0:i + 1]), 2))
            t0, c0, i0 = t, c, i + 1
    worker_rss = [w for *_, w in samples if w]
    report = {
        "command": " ".join(cmd),
        "exit_code": proc.returncode,
        "deaths": int(proc.returncode not in (0, 1)),
        "seconds": summary["seconds"],
        "cases": summary["cases"],
        "crashes": summary["crashes"],
        "hangs": summary["hangs"],
        "harness_errors": summary.get("harness_errors", {}),
        "cases_per_second_by_window": rates,
        "load_average_by_window": window_loads,
        "rate_decay": round(1 - rates[-1] / rates[0], 4) if len(rates) >= 2 and rates[0] else None,
        "parent_rss_mb": [round(p / 2**20) for *_, p, _ in samples],
        "worker_rss_mb": [round(w / 2**20) for w in worker_rss],
        "parent_rss_growth": _growth([p for *_, p, _ in samples]) if samples else None,
        "worker_rss_growth": _growth(worker_rss) if worker_rss else None,
        "load_average": [round(x, 2) for x in psutil.getloadavg()],
    }
    (out / "soak.json").write_text(json.dumps(report, indent=1) + "\n")
    return report


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--budget", default="1h")
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--window", default="10m", help="cases/s is reported per window of this length")
    p.add_argument("--out", default="soak-out")
    p.add_argument("extra", nargs="*", help="more `dynfuzz fuzz` flags (after --)")
    args = p.parse_args()
    report = soak(parse_duration(args.budget), args.workers, parse_duration(args.window), Path(args.out),
                  args.extra)
    for key, value in report.items():
        if not key.endswith("_mb"):
            print(f"{key:>28}: {value}")
    healthy = (report["deaths"] == 0 and (report["parent_rss_growth"] or 0) < 0.2
               and (report["rate_decay"] or 0) < 0.2)
    return 0 if healthy else 1


if __name__ == "__main__":
    sys.exit(main())
