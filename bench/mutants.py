"""Do the issue-14 constructs, and only they, find their Dynamo mutants?

For each mutant, two seed-0 trials of the same size on the construct's family (dynfuzz.mutants.trials:
each a `dynfuzz fuzz` process of its own, backend eager, that must exit 0 or 1 after every case): `on` with
every construct, `off` with the family's issue-14 constructs switched off (DYNFUZZ_DISABLE_CONSTRUCTS). A
saved finding is the mutant's when its standalone repro fails with the mutant applied and passes on
unmodified torch. The mutant is found when `on` has such a finding on a program tagged with the construct;
it survives without the construct when `off` has none. (`order-reinsert` stays off in effects campaigns:
it reaches two known torch bugs.) Exits 1 when a mutant is not found, is found without its construct, or a
trial fails; a mutant this torch cannot take (its target is missing) is listed as n/a.

    python bench/mutants.py [--cases 100] [--only NAME]
"""
from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from dynfuzz.mutants.trials import CampaignFailed, MutantUnavailable, run_trial  # noqa: E402

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


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--cases", type=int, default=100)
    ap.add_argument("--only", action="append", default=[])
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="dynfuzz-mutants-"))
    print(f"{'mutant':26s} {'construct':18s} {'on: buckets/mutant':>19s} {'off: buckets/mutant':>20s} "
          f"{'verdict':>8s}  seconds on/off")
    failed = 0
    for name, (family, construct) in MUTANTS.items():
        if args.only and name not in args.only:
            continue
        try:
            on = run_trial(tmp / f"{name}-on", name, family, args.cases, disable=ALWAYS_OFF[family])
            off = run_trial(tmp / f"{name}-off", name, family, args.cases, disable=[OFF[family], ALWAYS_OFF[family]])
        except MutantUnavailable as e:  # this torch lacks the mutant's target: nothing to prove here
            print(f"{name:26s} {construct:18s} n/a: {e}", flush=True)
            continue
        except CampaignFailed as e:
            failed += 1
            print(f"{name:26s} {construct:18s} FAIL: {str(e).splitlines()[0][:300]}", flush=True)
            continue
        found, survived = on.owed_to(name, construct), off.owed_to(name)
        verdict = "ok" if found and not survived else "FAIL"
        failed += verdict != "ok"
        print(f"{name:26s} {construct:18s} {len(on.repros()):>12d}/{len(found):<6d} "
              f"{len(off.repros()):>13d}/{len(survived):<6d} {verdict:>8s}  {on.seconds:.0f}/{off.seconds:.0f}",
              flush=True)
    print(f"(campaigns of {args.cases} cases, seed 0, backend eager; outputs in {tmp})")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
