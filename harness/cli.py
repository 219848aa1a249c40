"""The `dynfuzz` command line: one tool, a verb per use (fuzz, sample, check, ...).

Exit codes: 0 success, 1 a divergence was found (where that is the question),
2 usage or input error, reported as one line on stderr, 3 an internal dynfuzz error
(one line; the traceback goes to a file), 128+N a campaign stopped by signal N
(SIGTERM, Ctrl-C) after writing its results.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import signal
import sys
from pathlib import Path

from dynfuzz import flags
from dynfuzz.budget import parse_duration
from dynfuzz.errors import UsageError
from dynfuzz.run.compilers import COMPILE_DEFAULTS, CompileSpec


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
    p.add_argument("--backends", default=None, metavar="B1,B2,...",
                   help="compare every case on each of these backends against eager (e.g. eager,aot_eager,inductor);"
                        " each finding names the first layer that diverges")
    p.add_argument("--cross-device", action="store_true",
                   help="with --device cuda: also compare the compiled CUDA run against CPU eager")
    p.add_argument("--mutant", action="append", default=[], metavar="NAME",
                   help="for dynfuzz's own tests: break torch with a named mutant (dynfuzz.mutants) in every worker")


def cmd_fuzz(args) -> int:
    from dynfuzz.run.campaign import Campaign, CampaignConfig

    budget = parse_duration(args.budget)
    resume = _resume(args)
    if args.workers < 0:
        raise UsageError("--workers must be 0 or more")
    if args.cases is not None and args.cases < 0:
        raise UsageError("--cases must not be negative")
    config = CampaignConfig(resume=resume, budget=budget, out=flags.out_dir(args.out), seed=args.seed,
                            spec=flags.compile_spec(args), families=flags.families(args.family),
                            workers=args.workers, max_cases=args.cases,
                            case_timeout=parse_duration(args.case_timeout),
                            known=flags.known_issues(args), progress=args.progress,
                            **flags.scale_options(args),
                            coverage=flags.coverage_spec(args), guided=args.guided,
                            worker_memory=flags.worker_memory(args), minimize_budget=flags.minimize_budget(args))
    summary = Campaign(config).run()
    print(json.dumps({k: summary[k] for k in ("cases", "cases_per_second", "findings", "unique", "bugs",
                                               "overhead_fraction")}))
    if args.fail_on_finding and summary["unique"]:
        return 1
    stopped = summary.get("stopped_by")
    return 128 + signal.Signals[stopped].value if stopped else 0


def _resume(args):
    """`--resume DIR`: the saved campaign's state, its settings written into `args` (run/resume.py)."""
    from dynfuzz.run.resume import SETTINGS, apply_settings, load

    if args.resume is None:
        return None
    defaults = build_parser().parse_args(["fuzz"])
    if args.out != defaults.out and Path(args.out).resolve() != Path(args.resume).resolve():
        raise UsageError(f"--resume {args.resume} continues in that directory; --out {args.out} conflicts")
    state = load(Path(args.resume))
    given = {dest for dest in SETTINGS.values() if getattr(args, dest) != getattr(defaults, dest)}
    apply_settings(state, args, given)
    args.out = args.resume
    return state


def cmd_sample(args) -> int:
    from dynfuzz.sample import sample

    if args.n < 0:
        raise UsageError("-n must not be negative")
    return sample(args.n, args.seed, flags.families(args.family), stats=args.stats, as_json=args.json,
                  case_seeds=tuple(args.case_seed or ()))


def cmd_check(args) -> int:
    from dynfuzz.check import check

    if (args.file is None) == (args.case_seed is None):
        raise UsageError("check takes a FILE.py or --case-seed N (one of them)")
    if args.case_seed is not None:
        return _check_case_seed(args)
    return check(Path(args.file), lambda meta: _fill_spec_from(args, meta))


def _check_case_seed(args) -> int:
    """`dynfuzz check --case-seed N [--family F]...`: redraw exactly that case of a campaign and judge it."""
    from dynfuzz.check import check
    from dynfuzz.sample import draw_or_report

    families = flags.families(args.family)
    case = draw_or_report(args.case_seed, families)
    if case is None:
        return 3
    return check(None, lambda meta: _fill_spec_from(args, meta), case=case)


def _fill_spec_from(args, meta: dict) -> CompileSpec:
    """Compile flags left unset on the command line come from a saved file's metadata."""
    for flag, default in COMPILE_DEFAULTS.items():
        if getattr(args, flag) is None:
            setattr(args, flag, meta.get(flag, default))
    return flags.compile_spec(args)


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
    from dynfuzz.triage.corpus_replay import replay_command

    return replay_command(args.paths, args.workers, args.known)


def cmd_gate(args) -> int:
    from dynfuzz.gate import GateConfig, run_gate

    if args.cases < 0:
        raise UsageError("--cases must not be negative")
    if args.workers < 0:
        raise UsageError("--workers must be 0 or more")
    config = GateConfig(budget=parse_duration(args.budget), cases=args.cases, seed=args.seed,
                        spec=flags.compile_spec(args), families=flags.families(args.family),
                        corpus=[Path(c) for c in args.corpus],
                        out=flags.out_dir(args.out), junit=Path(args.junit) if args.junit else None,
                        summary=Path(args.summary) if args.summary else None, workers=args.workers,
                        known=args.known, minimize_budget=flags.minimize_budget(args))
    return run_gate(config)


def _add_corpus_flags(p) -> None:
    p.add_argument("--corpus", default=None, metavar="DIR",
                   help="the corpus folder (default: $DYNFUZZ_CORPUS, else corpus/ of the editable checkout)")
    p.add_argument("--known", default=None, help="known-issues TOML (default: known_issues.toml in the corpus folder)")


def _add_minimize_flags(p) -> None:
    p.add_argument("--minimize-budget", default="60s",
                   help="minimize each new bucket in a worker process for at most this long (default 60s)")
    p.add_argument("--no-minimize", action="store_true",
                   help="do not minimize: buckets keep their cheap keys and are marked unminimized")


def cmd_known(args) -> int:
    """`dynfuzz known --refresh | --check | add BUCKET [--upstream URL]`: known issues by bucket key."""
    from dynfuzz.triage import known as known_mod
    from dynfuzz.triage.repro import torch_version

    issues = flags.known_issues(args)
    path = issues.path
    version = torch_version()
    if args.action == "add":
        if not args.bucket:
            raise UsageError("known add needs a bucket folder: dynfuzz known add OUT/findings/<slug>-<id>")
        item = known_mod.add(issues, Path(args.bucket), version, args.upstream or "")
        issues.save(path)
        print(f"added {item['corpus']}: {item['key']}")
        return 0
    if args.action is not None:
        raise UsageError(f"unknown known action {args.action!r}; use: known add BUCKET, known --refresh, known --check")
    if args.refresh:
        failed = known_mod.refresh(issues, version)
        issues.save(path)
        print(f"refreshed {len(issues.issues)} entries on torch {version}; {failed} could not be computed")
        return 0
    if args.check:
        drift = known_mod.check(issues, version)
        print(f"{drift} entr{'y' if drift == 1 else 'ies'} drifted" if drift else "no drift")
        return 1 if drift else 0
    for item in issues.issues:
        versions = item.get("torch") or []
        versions = [versions] if isinstance(versions, str) else versions
        print(f"{item.get('key', '(no key: run dynfuzz known --refresh)')}  [{', '.join(versions)}]"
              f"  {item.get('corpus', '')}")
    return 0


def cmd_report(args) -> int:
    from dynfuzz.report import write_report

    dirs = [Path(d) for d in args.dirs]
    if args.out is None and len(dirs) > 1:
        raise UsageError("several campaigns are merged into one report: say where it goes with --out DIR")
    out = flags.out_dir(args.out) if args.out else dirs[0]
    html, md = write_report(dirs, out, Path(args.since) if args.since else None)
    print(f"{html}\n{md}")
    return 0


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


def cmd_merge(args) -> int:
    from dynfuzz.merge import merge

    merged = merge(args.dirs, Path(args.out))
    print(json.dumps({k: merged.get(k) for k in ("runs", "cases", "cases_per_second", "findings", "unique")}))
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
    _add_corpus_flags(p)
    p.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None)
    p.add_argument("--fail-on-finding", action="store_true", help="exit 1 when any unique finding was saved")
    _add_minimize_flags(p)
    p.add_argument("--db", default=os.environ.get("DYNFUZZ_DB", ".hypothesis/examples"),
                   help="Hypothesis example database: a directory, or redis://HOST:PORT[/N] shared by shards and "
                        "nights (needs dynfuzz[redis]); findings saved, replayed first next run")
    p.add_argument("--db-expire", type=float, default=30.0, metavar="DAYS",
                   help="a Redis database entry unused this many days expires (default 30)")
    p.add_argument("--shard", default=None, metavar="I/N",
                   help="run shard I of N: the N shards of one --seed never draw the same program")
    p.add_argument("--ray", nargs="?", const="local", default=None, metavar="ADDRESS",
                   help="run the workers as Ray actors, one per core (per GPU with --device cuda): on the cluster "
                        "at ADDRESS, or a local one; needs dynfuzz[ray]")
    p.add_argument("--no-db", action="store_true", help="do not read or write the example database")
    p.add_argument("--resume", default=None, metavar="DIR",
                   help="continue the campaign in DIR after its parent died: its settings, counts and findings kept, "
                        "in-flight cases run again, the seed stream continued; --budget is the new time")
    p.add_argument("--worker-memory", default=None, metavar="SIZE",
                   help="address-space limit per worker (RLIMIT_AS), e.g. 4G, or off; a case reaching it is a "
                        "harness error (default: half the RAM shared by the workers, at least 4G; off for cuda)")
    p.add_argument("--coverage", action="store_true",
                   help="measure line coverage of torch._dynamo per worker (OUT/coverage.json, summary table)")
    p.add_argument("--coverage-scope", action="append", metavar="PKG",
                   help="also measure this package, e.g. torch._inductor (repeatable; implies --coverage)")
    p.add_argument("--guided", action="store_true",
                   help="coverage-guided generation: weight fragments and mutate choice sequences that reached "
                        "new lines (reproducible per case from OUT/guided/cases.jsonl, not as a stream)")
    _add_compile_flags(p)
    p.set_defaults(func=cmd_fuzz)

    p = sub.add_parser("sample", help="print generated programs, or their feature coverage and validity")
    p.add_argument("-n", type=int, default=5)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--family", action="append")
    p.add_argument("--stats", action="store_true", help="coverage and validity instead of programs")
    p.add_argument("--json", action="store_true")
    p.add_argument("--case-seed", type=int, action="append", metavar="N",
                   help="print exactly the case with this seed, as a campaign drew it (repeatable; every finding "
                        "and harness-error record names its case seed)")
    p.set_defaults(func=cmd_sample)

    p = sub.add_parser("check", help="run the oracles on one saved or hand-written program")
    p.add_argument("file", nargs="?", default=None)
    p.add_argument("--case-seed", type=int, default=None, metavar="N",
                   help="instead of a file: redraw the campaign case with this seed (every record names it)")
    p.add_argument("--family", action="append", help="with --case-seed: the campaign's families (repeatable)")
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
    _add_minimize_flags(p)
    _add_compile_flags(p)
    p.set_defaults(func=cmd_gate)

    p = sub.add_parser("known", help="known issues by bucket key: list, --refresh, --check, add BUCKET")
    p.add_argument("action", nargs="?", choices=("add",), help="add: promote a campaign bucket to a known issue")
    p.add_argument("bucket", nargs="?", help="with add: the bucket folder, OUT/findings/<slug>-<id>")
    p.add_argument("--upstream", default=None, help="with add: the upstream issue URL")
    p.add_argument("--refresh", action="store_true", help="recompute every key from its corpus repro")
    p.add_argument("--check", action="store_true", help="exit 1 when a repro no longer produces its key")
    _add_corpus_flags(p)
    p.set_defaults(func=cmd_known)

    p = sub.add_parser("merge", help="merge the summary.json of shards or runs into one (counts add, buckets united)")
    p.add_argument("dirs", nargs="+", metavar="DIR", help="run output folders (each with a summary.json)")
    p.add_argument("--out", required=True, help="where the merged summary.json and findings/ go")
    p.set_defaults(func=cmd_merge)

    p = sub.add_parser("report", help="self-contained HTML + Markdown report of one or several campaigns")
    p.add_argument("dirs", nargs="+", metavar="DIR", help="campaign folders (each with a summary.json)")
    p.add_argument("--since", default=None, metavar="PREV",
                   help="an earlier campaign folder: new buckets, buckets no longer seen and count changes first")
    p.add_argument("--out", default=None, help="where report.html and report.md go (default: the one DIR)")
    p.set_defaults(func=cmd_report)

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
    except BrokenPipeError:  # `dynfuzz sample | head`: the reader left; not an internal error
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141
    except Exception as e:  # a bug in dynfuzz: one line, the traceback in a file, exit 3 (never a torch finding)
        return _internal_error(e)


def _internal_error(e: Exception) -> int:
    import tempfile
    import traceback

    from dynfuzz.run.workers import WorkerStartError

    if isinstance(e, WorkerStartError):
        print(f"dynfuzz: internal error: {e}", file=sys.stderr)
        return 3
    fd, path = tempfile.mkstemp(prefix="dynfuzz-internal-error-", suffix=".txt")
    with os.fdopen(fd, "w") as fh:
        traceback.print_exception(e, file=fh)
    first = str(e).strip().splitlines()[0][:200] if str(e).strip() else ""
    print(f"dynfuzz: internal error: {type(e).__name__}: {first} (traceback in {path})", file=sys.stderr)
    return 3


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    sys.exit(main())
