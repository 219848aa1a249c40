"""The `dynfuzz` command line: one tool, a verb per use (fuzz, sample, check, ...).

Exit codes: 0 success, 1 a divergence was found (where that is the question),
2 usage or input error, reported as one line on stderr.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import sys
from pathlib import Path

from dynfuzz.budget import parse_duration
from dynfuzz.errors import UsageError
from dynfuzz.run.compilers import BACKENDS, COMPILE_DEFAULTS, DEVICES, CompileSpec


def _spec(args) -> CompileSpec:
    from dynfuzz.run.compilers import compiler_names

    if args.backend not in BACKENDS:
        raise UsageError(f"unknown backend {args.backend!r}; choose from {', '.join(BACKENDS)}")
    if args.device not in DEVICES:
        raise UsageError(f"unknown device {args.device!r}; choose from {', '.join(DEVICES)}")
    names = compiler_names()
    if args.compiler not in names:
        raise UsageError(f"unknown compiler {args.compiler!r}; choose from {', '.join(names)}")
    if args.device == "cuda":
        import torch

        if not torch.cuda.is_available():
            raise UsageError("--device cuda asked for, but CUDA is not available on this machine")
    mutants = getattr(args, "mutant", None) or []
    if mutants:
        from dynfuzz.mutants import enable, load

        unknown = sorted(set(mutants) - set(load()))
        if unknown:
            raise UsageError(f"unknown mutant {unknown[0]!r}; choose from {', '.join(sorted(load())) or '(none)'}")
        enable(mutants)
    guards = bool(getattr(args, "guards", False))
    reference = bool(getattr(args, "reference", False)) or guards
    return CompileSpec(args.compiler, args.backend, args.device, args.fullgraph, args.dynamic, reference, guards)


def _families(names: list[str] | None) -> tuple[str, ...]:
    from dynfuzz.generators import family_names

    known = family_names()
    for name in names or ():
        if name not in known:
            raise UsageError(f"unknown family {name!r}; choose from {', '.join(known)}")
    return tuple(names or ())


def _out_dir(path: str) -> Path:
    out = Path(path)
    try:
        out.mkdir(parents=True, exist_ok=True)
        probe = out / ".write-test"
        probe.write_text("")
        probe.unlink()
    except OSError as e:
        raise UsageError(f"cannot write to --out {path}: {e.strerror or e}") from None
    return out


def _add_compile_flags(p: argparse.ArgumentParser, defaults: bool = True) -> None:
    """Compile flags; with `defaults=False` unset flags stay None so a saved file's metadata can fill them."""
    d = COMPILE_DEFAULTS if defaults else dict.fromkeys(COMPILE_DEFAULTS)
    p.add_argument("--backend", default=d["backend"], help="eager, aot_eager or inductor (default eager)")
    p.add_argument("--device", default=d["device"], help="cpu or cuda (default cpu)")
    p.add_argument("--fullgraph", action=argparse.BooleanOptionalAction, default=d["fullgraph"],
                   help="compile with fullgraph=True (default: --no-fullgraph)")
    p.add_argument("--dynamic", action=argparse.BooleanOptionalAction, default=None,
                   help="force dynamic=True/False (default: torch's automatic dynamic)")
    p.add_argument("--compiler", default=d["compiler"],
                   help="torch (default) or a deliberately broken test double, to check the oracles")
    p.add_argument("--reference", action="store_true",
                   help="also trace every case with the reference tracer and self-check it (reference-bug findings)")
    p.add_argument("--guards", action="store_true",
                   help="also probe guards: perturb the call plan from the reference trace (about 1-2 s a case)")
    p.add_argument("--mutant", action="append", default=[], metavar="NAME",
                   help="for dynfuzz's own tests: break torch with a named mutant (dynfuzz.mutants) in every worker")


def cmd_fuzz(args) -> int:
    from dynfuzz.run.campaign import Campaign, CampaignConfig
    from dynfuzz.triage.known import KnownIssues

    budget = parse_duration(args.budget)
    if args.workers < 0:
        raise UsageError("--workers must be 0 or more")
    if args.cases is not None and args.cases < 0:
        raise UsageError("--cases must not be negative")
    config = CampaignConfig(budget=budget, out=_out_dir(args.out), seed=args.seed, spec=_spec(args),
                            families=_families(args.family), workers=args.workers, max_cases=args.cases,
                            case_timeout=parse_duration(args.case_timeout),
                            known=KnownIssues.load(args.known), progress=args.progress,
                            database=None if args.no_db else Path(args.db))
    summary = Campaign(config).run()
    print(json.dumps({k: summary[k] for k in ("cases", "cases_per_second", "findings", "unique",
                                               "overhead_fraction")}))
    return 1 if args.fail_on_finding and summary["unique"] else 0


def cmd_sample(args) -> int:
    from dynfuzz.sample import sample

    if args.n < 0:
        raise UsageError("-n must not be negative")
    return sample(args.n, args.seed, _families(args.family), stats=args.stats, as_json=args.json)


def cmd_check(args) -> int:
    from dynfuzz.check import check

    return check(Path(args.file), lambda meta: _fill_spec_from(args, meta))


def _fill_spec_from(args, meta: dict) -> CompileSpec:
    """Compile flags left unset on the command line come from a saved file's metadata."""
    for flag, default in COMPILE_DEFAULTS.items():
        if getattr(args, flag) is None:
            setattr(args, flag, meta.get(flag, default))
    return _spec(args)


def cmd_minimize(args) -> int:
    from dynfuzz.triage.minimize import minimize_file
    from dynfuzz.triage.repro import read_program

    budget = parse_duration(args.budget)
    saved = read_program(Path(args.file))
    spec = _fill_spec_from(args, saved.meta)
    m, path = minimize_file(saved, spec, budget, Path(args.out) if args.out else None, args.signature)
    print(path.read_text())
    print(f"# minimized {args.file}: {m.original_lines} -> {m.lines} program lines in {m.seconds:.1f} s, "
          f"signature {m.finding.signature}; written to {path}", file=sys.stderr)
    return 0


def cmd_replay(args) -> int:
    from dynfuzz.triage.replay import replay_command

    return replay_command(args.paths, args.workers, args.known)


def cmd_gate(args) -> int:
    from dynfuzz.gate import GateConfig, run_gate

    if args.cases < 0:
        raise UsageError("--cases must not be negative")
    if args.workers < 0:
        raise UsageError("--workers must be 0 or more")
    config = GateConfig(budget=parse_duration(args.budget), cases=args.cases, seed=args.seed,
                        spec=_spec(args), families=_families(args.family), corpus=[Path(c) for c in args.corpus],
                        out=_out_dir(args.out), junit=Path(args.junit) if args.junit else None,
                        summary=Path(args.summary) if args.summary else None, workers=args.workers,
                        known=args.known)
    return run_gate(config)


class _Parser(argparse.ArgumentParser):
    """argparse with one-line errors (`dynfuzz: error: ...`, exit 2) instead of the usage block."""

    def error(self, message: str):
        print(f"dynfuzz: error: {message}", file=sys.stderr)
        raise SystemExit(2)


_NEGATIVE_VALUE = re.compile(r"^-\d+(\.\d+)?[smh]?$")


def _join_negative_values(argv: list[str]) -> list[str]:
    """`--budget -5s` -> `--budget=-5s`, so the value reaches our own check instead of argparse's."""
    out: list[str] = []
    for arg in argv:
        if out and _NEGATIVE_VALUE.match(arg) and out[-1].startswith("-") and "=" not in out[-1]:
            out[-1] = f"{out[-1]}={arg}"
        else:
            out.append(arg)
    return out


def cmd_selfcheck(args) -> int:
    from dynfuzz.run.reference import selfcheck

    if args.n < 0:
        raise UsageError("-n must not be negative")
    result = selfcheck(args.n, args.seed, _families(args.family), compile_time=not args.no_compile_time)
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


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="dynfuzz", description="Differential fuzzing for torch.compile.")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    p = sub.add_parser("fuzz", help="run a campaign: progress, summary table, OUT/summary.json, OUT/findings/")
    p.add_argument("--budget", default="60s", help="wall-clock budget: 30s, 10m, 2h (default 60s)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--family", action="append", help="restrict to a family (repeatable)")
    p.add_argument("--out", default="dynfuzz-out")
    p.add_argument("--workers", type=int, default=1, help="worker processes (0: run in this process)")
    p.add_argument("--cases", type=int, default=None, help="stop after this many cases")
    p.add_argument("--case-timeout", default="300s", help="per-case limit before the case is a hang")
    p.add_argument("--known", default=None, help="known-issues TOML (default corpus/known_issues.toml)")
    p.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None)
    p.add_argument("--fail-on-finding", action="store_true", help="exit 1 when any unique finding was saved")
    p.add_argument("--db", default=".hypothesis/examples",
                   help="Hypothesis example database directory: findings saved, replayed first next run")
    p.add_argument("--no-db", action="store_true", help="do not read or write the example database")
    _add_compile_flags(p)
    p.set_defaults(func=cmd_fuzz)

    p = sub.add_parser("sample", help="print generated programs, or their feature coverage and validity")
    p.add_argument("-n", type=int, default=5)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--family", action="append")
    p.add_argument("--stats", action="store_true", help="coverage and validity instead of programs")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_sample)

    p = sub.add_parser("check", help="run the oracles on one saved or hand-written program")
    p.add_argument("file")
    _add_compile_flags(p, defaults=False)
    p.set_defaults(func=cmd_check)

    p = sub.add_parser("minimize", help="shrink a failing program toward the same failure")
    p.add_argument("file")
    p.add_argument("--budget", default="2m", help="time budget (default 2m)")
    p.add_argument("--out", default=None, help="output script (default FILE.min.py beside the input)")
    p.add_argument("--signature", default=None, help="the finding to preserve (default: the file's, or the most "
                                                     "severe one)")
    _add_compile_flags(p, defaults=False)
    p.set_defaults(func=cmd_minimize)

    p = sub.add_parser("replay", help="re-run the corpus: still failing, fixed, new")
    p.add_argument("paths", nargs="*", help="corpus files or folders (default corpus/)")
    p.add_argument("--workers", type=int, default=2, help="worker processes (0: in this process)")
    p.add_argument("--known", default=None, help="known-issues TOML (default corpus/known_issues.toml)")
    p.set_defaults(func=cmd_replay)

    p = sub.add_parser("gate", help="the PR gate: corpus replay + a deterministic generated run")
    p.add_argument("--budget", default="5m", help="wall-clock budget (default 5m)")
    p.add_argument("--cases", type=int, default=200, help="generated cases (default 200)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--family", action="append", help="restrict generated cases to a family (repeatable)")
    p.add_argument("--corpus", action="append", default=[], help="corpus files or folders (default corpus/)")
    p.add_argument("--out", default="dynfuzz-gate", help="where new findings and their minimized repros go")
    p.add_argument("--junit", default=None, help="write JUnit XML here")
    p.add_argument("--summary", default=None, help="write a Markdown summary (for a PR comment) here")
    p.add_argument("--workers", type=int, default=1, help="worker processes for generated cases (0: inline)")
    p.add_argument("--known", default=None, help="known-issues TOML (default corpus/known_issues.toml)")
    _add_compile_flags(p)
    p.set_defaults(func=cmd_gate)

    p = sub.add_parser("selfcheck", help="reference tracer vs eager on generated programs (exit 1 on disagreement)")
    p.add_argument("-n", type=int, default=100)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--family", action="append")
    p.add_argument("--json", action="store_true")
    p.add_argument("--no-compile-time", action="store_true", help="skip the backend-eager compile timing")
    p.set_defaults(func=cmd_selfcheck)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(_join_negative_values(list(sys.argv[1:] if argv is None else argv)))
    except SystemExit as e:  # argparse already printed its one-line usage error
        return 2 if e.code else 0
    try:
        return args.func(args)
    except UsageError as e:
        print(f"dynfuzz: error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("dynfuzz: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    sys.exit(main())
