"""`dynfuzz sample`, `check`, `minimize` and `selfcheck`: looking at, judging and shrinking one program."""
from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from dynfuzz.budget import parse_duration
from dynfuzz.cli import flags
from dynfuzz.cli.flags import add_compile_flags, fill_spec_from
from dynfuzz.errors import UsageError


def cmd_sample(args) -> int:
    from dynfuzz.sample import sample

    if args.n < 0:
        raise UsageError("-n must not be negative")
    from dynfuzz.generators.swarm import SwarmConfig

    return sample(args.n, args.seed, flags.families(args.family), stats=args.stats, as_json=args.json,
                  case_seeds=tuple(args.case_seed or ()), swarm=SwarmConfig() if args.swarm else None)


def cmd_check(args) -> int:
    from dynfuzz.check import check
    from dynfuzz.run.torch_compat import pristine_tree

    if (args.file is None) == (args.case_seed is None):
        raise UsageError("check takes a FILE.py or --case-seed N (one of them)")
    with pristine_tree(flags.pristine(args)):
        if args.case_seed is not None:
            return _check_case_seed(args)
        return check(Path(args.file), lambda meta: fill_spec_from(args, meta))


def _check_case_seed(args) -> int:
    """`dynfuzz check --case-seed N [--family F]...`: redraw exactly that case of a campaign and judge it."""
    from dynfuzz.check import check
    from dynfuzz.sample import draw_or_report

    families = flags.families(args.family)
    case = draw_or_report(args.case_seed, families)
    if case is None:
        return 3
    return check(None, lambda meta: fill_spec_from(args, meta), case=case)


def cmd_minimize(args) -> int:
    from dynfuzz.triage.minimize import minimize_file
    from dynfuzz.triage.repro import read_program

    budget = parse_duration(args.budget)
    saved = read_program(Path(args.file))
    spec = fill_spec_from(args, saved.meta)
    with _unusable_program(args.file):
        m, path = minimize_file(saved, spec, budget, Path(args.out) if args.out else None, args.signature)
    print(path.read_text())
    print(f"# minimized {args.file}: {m.original_lines} -> {m.lines} program lines in {m.seconds:.1f} s, "
          f"signature {m.finding.signature}; written to {path}", file=sys.stderr)
    return 0


def cmd_selfcheck(args) -> int:
    from dynfuzz.run.reference_trace import selfcheck

    if args.n < 0:
        raise UsageError("-n must not be negative")
    result = selfcheck(args.n, args.seed, flags.families(args.family), compile_time=not args.no_compile_time)
    if args.json:
        print(json.dumps(result))
    else:
        for key in ("n", "agree", "disagree", "unsupported", "median_trace_ms", "median_compile_ms"):
            print(f"{key:>18}: {result[key]}")
        for construct, count in result["unsupported_constructs"].items():
            print(f"  unsupported {count:4d}  {construct}")
        for problem in result["problems"]:
            print(f"  disagree seed={problem['seed']}: {problem['why']}")
    return 1 if result["disagree"] else 0


def cmd_explain(args) -> int:
    """`dynfuzz explain FILE.py [--json]`: the bucket key a campaign would file the program under."""
    from dynfuzz.triage.explain_file import explain_file

    path = Path(args.file)
    if not path.is_file():
        raise UsageError(f"no such program: {args.file}")
    with _unusable_program(args.file):
        result = explain_file(path, lambda meta: fill_spec_from(args, meta), parse_duration(args.backstop),
                              localize_too=not args.no_localize)
    if result is None:  # exit codes as `check`'s: 0 no divergence, 1 a divergence (here: explained)
        print(json.dumps({"key": None, "diverges": False}) if args.json else f"{args.file}: does not diverge")
        return 0
    if args.json:
        print(json.dumps(result.as_json()))
        return 1
    print(f"key:    {result.key}\ncause:  {result.cause}\ntier:   {result.tier}\nstable: {result.stable} "
          f"({result.minimized_lines} program lines, {result.seconds:.0f} s)")
    for s in result.suspects:
        print(f"  {s['score']:.3f}  {s['function']}  (failing {s['failing']}, passing {s['passing']})")
    return 1


@contextmanager
def _unusable_program(name: str) -> Iterator[None]:
    """A program whose `inputs()` raises is bad input (exit 2, as `check` says), not dynfuzz's internal error."""
    from dynfuzz.errors import InvalidCase

    try:
        yield
    except InvalidCase as e:
        raise UsageError(f"{name}: {e}") from None


def add_parsers(sub) -> None:
    p = sub.add_parser("sample", help="print generated programs, or their feature coverage and validity")
    p.add_argument("-n", type=int, default=5)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--family", action="append")
    p.add_argument("--stats", action="store_true", help="coverage and validity instead of programs")
    p.add_argument("--json", action="store_true")
    p.add_argument("--case-seed", type=int, action="append", metavar="N",
                   help="print exactly the case with this seed, as a campaign drew it (repeatable; every finding "
                        "and harness-error record names its case seed)")
    p.add_argument("--swarm", action="store_true",
                   help="draw as a `fuzz --swarm` campaign does (each window of seeds from its subset of the grammar; "
                        "without the down-weights a campaign learns, which OUT/swarm/windows.jsonl records)")
    p.set_defaults(func=cmd_sample)

    p = sub.add_parser("check", help="run the oracles on one saved or hand-written program")
    p.add_argument("file", nargs="?", default=None)
    p.add_argument("--case-seed", type=int, default=None, metavar="N",
                   help="instead of a file: redraw the campaign case with this seed (every record names it)")
    p.add_argument("--family", action="append", help="with --case-seed: the campaign's families (repeatable)")
    add_compile_flags(p, defaults=False)
    flags.add_pristine_flag(p)
    p.set_defaults(func=cmd_check)

    p = sub.add_parser("minimize", help="shrink a failing program toward the same failure")
    p.add_argument("file")
    p.add_argument("--budget", default="2m", help="time budget (default 2m)")
    p.add_argument("--out", default=None, help="output script (default FILE.min.py beside the input)")
    p.add_argument("--signature", default=None, help="the finding to preserve (default: the file's, or the most "
                                                     "severe one)")
    add_compile_flags(p, defaults=False)
    p.set_defaults(func=cmd_minimize)

    p = sub.add_parser("explain", help="minimize, explain and localize one program: its bucket key, cause, tier, "
                                       "suspects (exit 1 when it does not diverge)")
    p.add_argument("file")
    p.add_argument("--json", action="store_true", help="one JSON object: key, cause, tier, suspects, stable")
    p.add_argument("--backstop", default="10m",
                   help="seconds that stop minimization if its judge calls have not (the key is then `stable: false`)")
    p.add_argument("--no-localize", action="store_true", help="skip the localization of silent divergences")
    add_compile_flags(p, defaults=False)
    p.set_defaults(func=cmd_explain)

    p = sub.add_parser("selfcheck", help="reference tracer vs eager on generated programs (exit 1 on disagreement)")
    p.add_argument("-n", type=int, default=100)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--family", action="append")
    p.add_argument("--json", action="store_true")
    p.add_argument("--no-compile-time", action="store_true", help="skip the backend-eager compile timing")
    p.set_defaults(func=cmd_selfcheck)
