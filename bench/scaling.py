"""How a campaign scales: local workers, Ray actors, and how many workers one Ray driver can serve.

Three measurements, all through the real campaign loop (`Campaign.run`, its ledger and in-flight files):

1. local: cases/s with 1 and 2 worker processes (`--workers`), backend eager (target: 2 workers >= 1.8x);
2. ray: cases/s with 1 and 2 Ray actors on a local cluster of this machine, and Ray's fixed cost (starting
   the cluster, starting the actors). Ray's own processes share the cores with the actors;
3. driver: the driver's CPU time per case and per finding, with synthetic actors that answer each block
   at once with canned results (one real case judged once), so the driver is the only bottleneck. From
   it: workers one driver can serve = 1 / (CPU seconds per case x cases/s per worker).

    python bench/scaling.py [--seconds 30] [--driver-cases 20000] [--rate 8] [--skip local,ray,driver]
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from dynfuzz.campaign import cluster  # noqa: E402
from dynfuzz.campaign.campaign import Campaign, CampaignConfig  # noqa: E402
from dynfuzz.run.compilers import CompileSpec  # noqa: E402


def campaign(out: Path, seconds: float, spec: CompileSpec, **kw) -> dict:
    config = CampaignConfig(budget=seconds, out=out, spec=spec, progress=False, **kw)
    return Campaign(config).run()


def measure_local(seconds: float, spec: CompileSpec, tmp: Path) -> dict:
    rates = {}
    for workers in (1, 2):
        s = campaign(tmp / f"local{workers}", seconds, spec, workers=workers)
        rates[workers] = s["cases_per_second"]
        print(f"local  workers={workers}: {s['cases']} cases in {s['seconds']:.1f} s = {s['cases_per_second']:.2f} "
              f"cases/s (startup {s['startup_seconds']:.1f} s)", flush=True)
    return {"cases_per_second": rates, "ratio": round(rates[2] / max(rates[1], 1e-9), 3)}


def measure_ray(seconds: float, spec: CompileSpec, tmp: Path) -> dict:
    import ray

    out: dict = {"cases_per_second": {}, "ray_init_seconds": {}, "actor_start_seconds": {}}
    for actors in (1, 2):
        t = time.monotonic()
        ray.init(num_cpus=actors, include_dashboard=False, log_to_driver=False)
        out["ray_init_seconds"][actors] = round(time.monotonic() - t, 2)
        s = campaign(tmp / f"ray{actors}", seconds, spec, ray="local")
        ray.shutdown()
        out["cases_per_second"][actors] = s["cases_per_second"]
        out["actor_start_seconds"][actors] = s["startup_seconds"]
        print(f"ray    actors={actors}: {s['cases']} cases in {s['seconds']:.1f} s = {s['cases_per_second']:.2f} "
              f"cases/s (ray.init {out['ray_init_seconds'][actors]:.1f} s, actors ready after "
              f"{s['startup_seconds']:.1f} s)", flush=True)
    rates = out["cases_per_second"]
    out["ratio"] = round(rates[2] / max(rates[1], 1e-9), 3)
    return out


class SyntheticRunner(cluster.CaseRunner):
    """An actor that judges one real case once, then answers every block at once with copies of it."""

    def __init__(self, spec: CompileSpec) -> None:
        super().__init__(spec)
        from dynfuzz.generators.case import draw_case
        from dynfuzz.run.judge import judge

        self.case = draw_case(3, ("basic",))
        self.result = judge(self.case, self.compiler, spec)

    def run_block(self, items):
        return self.node, 0.0, [(lane, self.case, "done", self.result) for lane, _ in items]


def measure_driver(cases: int, compiler: str, tmp: Path, actors: int = 2, inflight: bool = True) -> dict:
    """The driver's CPU per result; `inflight=False` leaves out the campaign's per-case in-flight file (to
    show its share: on a cluster the actors also record each case on their own node)."""
    import ray

    ray.init(num_cpus=actors, include_dashboard=False, log_to_driver=False)
    marks: dict[str, float] = {}
    start, close = cluster.RayPool.__init__, cluster.RayPool.close

    def timed_start(self, *a, **kw):
        start(self, *a, **kw)
        marks["ready"] = time.process_time()

    def timed_close(self):
        marks["closing"] = time.process_time()
        close(self)

    cluster.RayPool.runner_class = SyntheticRunner
    cluster.RayPool.__init__, cluster.RayPool.close = timed_start, timed_close
    write_inflight = Campaign._write_inflight
    if not inflight:
        Campaign._write_inflight = lambda self, slot, case: None
    try:
        t0 = time.monotonic()
        s = campaign(tmp / f"driver-{compiler}", 3600, CompileSpec(compiler=compiler), ray="local",
                     max_cases=cases)
        wall = time.monotonic() - t0
    finally:
        cluster.RayPool.runner_class = cluster.CaseRunner
        cluster.RayPool.__init__, cluster.RayPool.close = start, close
        Campaign._write_inflight = write_inflight
        ray.shutdown()
    cpu = marks["closing"] - marks["ready"]  # the loop only: start-up and the final summary are paid once
    per_case = cpu / max(s["cases"], 1)
    print(f"driver compiler={compiler} in-flight files={'yes' if inflight else 'no'}: {s['cases']} results "
          f"({s['findings']} findings) in {s['seconds']:.1f} s "
          f"= {s['cases_per_second']:.0f} results/s; driver CPU in the loop {cpu:.1f} s ({wall:.1f} s wall in all) = "
          f"{1e6 * per_case:.0f} us per case", flush=True)
    return {"cases": s["cases"], "findings": s["findings"], "driver_cpu_seconds": round(cpu, 3),
            "results_per_second": s["cases_per_second"], "cpu_us_per_case": round(1e6 * per_case, 1)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=30.0, help="budget of each throughput campaign")
    parser.add_argument("--driver-cases", type=int, default=20000, help="synthetic results per driver run")
    parser.add_argument("--rate", type=float, default=8.0, help="cases/s of one real worker, for the estimate")
    parser.add_argument("--backend", default="eager")
    parser.add_argument("--skip", default="", help="comma-separated: local, ray, driver")
    parser.add_argument("--block", type=int, default=16,
                        help="cases per Ray call for the synthetic driver runs (real runs size blocks to ~2 s of work)")
    parser.add_argument("--json", default=None, help="also write the numbers here")
    args = parser.parse_args()
    skip = set(args.skip.split(","))

    spec = CompileSpec(backend=args.backend)
    report: dict = {"cpus": os.cpu_count(), "load_average_before": os.getloadavg(),
                    "block": args.block}
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        if "local" not in skip:
            report["local"] = measure_local(args.seconds, spec, tmp)
        if "ray" not in skip:
            report["ray"] = measure_ray(args.seconds, spec, tmp)
        if "driver" not in skip:
            cluster.RayPool.fixed_block = args.block  # synthetic cases take no time: pin the block size
            clean = measure_driver(args.driver_cases, "identity", tmp)
            bare = measure_driver(args.driver_cases, "identity", tmp, inflight=False)
            found = measure_driver(args.driver_cases, "perturb-output", tmp)
            cluster.RayPool.fixed_block = None
            per_finding = ((found["driver_cpu_seconds"] - clean["driver_cpu_seconds"])
                           / max(found["findings"], 1))
            workers = 1 / (clean["cpu_us_per_case"] * 1e-6 * args.rate)
            report["driver"] = {"no_findings": clean, "no_findings_no_inflight_files": bare,
                                "every_case_a_finding": found,
                                "workers_per_driver_without_inflight_files":
                                    round(1 / (bare["cpu_us_per_case"] * 1e-6 * args.rate)),
                                "cpu_us_per_finding": round(1e6 * per_finding, 1),
                                "workers_per_driver_at_rate": round(workers), "rate": args.rate}
            print(f"driver: {clean['cpu_us_per_case']:.0f} us CPU per case, {1e6 * per_finding:.0f} us more per "
                  f"(duplicate) finding => one driver serves about {workers:.0f} workers at {args.rate:g} "
                  f"cases/s each")
    report["load_average_after"] = os.getloadavg()
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=2) + "\n")
    print(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
