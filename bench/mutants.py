"""Do the issue-14 constructs, and only they, find their Dynamo mutants?

For each mutant, two seed-0 campaigns of the same size on the construct's family, each in its own
`dynfuzz fuzz` process (backend eager, one worker): `on` with every construct, `off` with the family's
issue-14 constructs switched off (DYNFUZZ_DISABLE_CONSTRUCTS). A saved finding is the mutant's when its
standalone repro fails with the mutant applied and passes on unmodified torch. The mutant is found when
`on` has such a finding on a program tagged with the construct; it survives without the construct when
`off` has none. (`order-reinsert` stays off in effects campaigns: it reaches two known torch bugs.)

    python bench/mutants.py [--cases 100] [--only NAME]
"""
from __future__ import annotations

import argparse
import ast
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

MUTANTS = {
    "cell-by-contents": ("closures", "cells-agree"),
    "cell-by-name": ("closures", "preexisting-cells"),
    "subscript-write-unmarked": ("effects", "sole-mutation"),
    "attr-replay-reversed": ("effects", "order-state"),
    "layout-inner-stride-only": ("resizes", "layout"),
    "out-resize-names-only": ("resizes", "out-alias"),
    "cond-closure-by-metadata": ("conds", "cond-closures"),
    "unbacked-guard-assumed-true": ("conds", "unbacked-config"),
}
OFF = {"closures": "cells-agree,preexisting-cells", "effects": "sole-mutation,order-state",
       "resizes": "layout,out-alias", "conds": "cond-closures,unbacked-config"}
ALWAYS_OFF = {"closures": "", "effects": "order-reinsert", "resizes": "", "conds": ""}
RUN_WITH_MUTANT = ("import sys, runpy; from dynfuzz.mutants import apply; "
                   "apply([sys.argv[1]]); runpy.run_path(sys.argv[2])")


def _meta(repro: Path) -> dict:
    for node in ast.parse(repro.read_text()).body:
        if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", None) == "DYNFUZZ":
            return ast.literal_eval(node.value)
    return {}


def campaign(out: Path, family: str, cases: int, mutant: str, disable: str) -> tuple[list[Path], float]:
    env = {**os.environ, "DYNFUZZ_DISABLE_CONSTRUCTS": ",".join(filter(None, (disable, ALWAYS_OFF[family])))}
    env.pop("DYNFUZZ_MUTANTS", None)
    cmd = [sys.executable, "-m", "dynfuzz", "fuzz", "--cases", str(cases), "--family", family, "--workers", "1",
           "--seed", "0", "--no-db", "--no-progress", "--no-minimize", "--budget", "3600s", "--out", str(out),
           "--mutant", mutant]
    start = time.perf_counter()
    subprocess.run(cmd, env=env, capture_output=True, text=True)
    return sorted(out.glob("findings/*/repro.py")), time.perf_counter() - start


def fails(repro: Path, mutant: str | None) -> bool:
    env = {k: v for k, v in os.environ.items() if k not in ("DYNFUZZ_MUTANTS", "DYNFUZZ_DISABLE_CONSTRUCTS")}
    cmd = [sys.executable, "-c", RUN_WITH_MUTANT, mutant, str(repro)] if mutant else [sys.executable, str(repro)]
    return subprocess.run(cmd, env=env, capture_output=True).returncode == 1


def the_mutants(repros: list[Path], mutant: str, construct: str | None) -> list[Path]:
    """Value/state findings (tagged with `construct`, if given) whose repro fails only under the mutant."""
    picked = [p for p in repros if _meta(p).get("oracle") in ("outputs", "effects")
              and (construct is None or construct in _meta(p).get("tags", ()))]
    return [p for p in picked if fails(p, mutant) and not fails(p, None)]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--cases", type=int, default=100)
    ap.add_argument("--only", action="append", default=[])
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="dynfuzz-mutants-"))
    print(f"{'mutant':26s} {'construct':18s} {'on: buckets/mutant':>19s} {'off: buckets/mutant':>20s} "
          f"{'verdict':>8s}  seconds on/off")
    for name, (family, construct) in MUTANTS.items():
        if args.only and name not in args.only:
            continue
        on, t_on = campaign(tmp / f"{name}-on", family, args.cases, name, "")
        off, t_off = campaign(tmp / f"{name}-off", family, args.cases, name, OFF[family])
        found, survived = the_mutants(on, name, construct), the_mutants(off, name, None)
        verdict = "ok" if found and not survived else "FAIL"
        print(f"{name:26s} {construct:18s} {len(on):>12d}/{len(found):<6d} {len(off):>13d}/{len(survived):<6d} "
              f"{verdict:>8s}  {t_on:.0f}/{t_off:.0f}", flush=True)
    print(f"(campaigns of {args.cases} cases, seed 0, backend eager; outputs in {tmp})")


if __name__ == "__main__":
    main()
