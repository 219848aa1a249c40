"""Do the issue-14 constructs, and only they, find their Dynamo mutants?

For each mutant, three seed-0 campaigns of the same size on the construct's family, each in its own
`dynfuzz fuzz` process (backend eager, one worker):
  on      the mutant, all constructs on;
  off     the mutant, the construct's family constructs switched off (DYNFUZZ_DISABLE_CONSTRUCTS);
  base    no mutant, the same constructs off.
The mutant is found when `on` has a value or state finding (outputs/effects oracle) tagged with the
construct; it survives without the construct when `off` saves no bucket that `base` does not.

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
}
OFF = {"closures": "cells-agree,preexisting-cells", "effects": "sole-mutation,order-state"}


def _meta(repro: Path) -> dict:
    for node in ast.parse(repro.read_text()).body:
        if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", None) == "DYNFUZZ":
            return ast.literal_eval(node.value)
    return {}


def campaign(out: Path, family: str, cases: int, mutant: str | None, disable: str) -> tuple[list[dict], float]:
    env = {**os.environ, "DYNFUZZ_DISABLE_CONSTRUCTS": disable}
    env.pop("DYNFUZZ_MUTANTS", None)
    cmd = [sys.executable, "-m", "dynfuzz", "fuzz", "--cases", str(cases), "--family", family, "--workers", "1",
           "--seed", "0", "--no-db", "--no-progress", "--budget", "3600s", "--out", str(out)]
    if mutant:
        cmd += ["--mutant", mutant]
    start = time.perf_counter()
    subprocess.run(cmd, env=env, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    return [_meta(p) for p in sorted(out.glob("findings/*/repro.py"))], seconds


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--cases", type=int, default=100)
    ap.add_argument("--only", action="append", default=[])
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="dynfuzz-mutants-"))
    print(f"{'mutant':26s} {'construct':18s} {'on: found':>10s} {'off: new buckets':>17s} {'verdict':>9s}  seconds")
    for name, (family, construct) in MUTANTS.items():
        if args.only and name not in args.only:
            continue
        on, t_on = campaign(tmp / f"{name}-on", family, args.cases, name, "")
        off, t_off = campaign(tmp / f"{name}-off", family, args.cases, name, OFF[family])
        base, t_base = campaign(tmp / f"{name}-base", family, args.cases, None, OFF[family])
        found = [m for m in on if m.get("oracle") in ("outputs", "effects") and construct in m.get("tags", ())]
        new_off = {m["signature"] for m in off} - {m["signature"] for m in base}
        verdict = "ok" if found and not new_off else "FAIL"
        print(f"{name:26s} {construct:18s} {len(found):10d} {len(new_off):17d} {verdict:>9s}  "
              f"{t_on:.0f}/{t_off:.0f}/{t_base:.0f}")


if __name__ == "__main__":
    main()
