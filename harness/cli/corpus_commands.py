"""`dynfuzz replay`, `gate` and `known`: the corpus, the PR gate and the known torch bugs."""
from __future__ import annotations

from pathlib import Path

from dynfuzz.budget import parse_duration
from dynfuzz.cli import flags
from dynfuzz.cli.flags import add_compile_flags, add_corpus_flags, add_minimize_flags
from dynfuzz.errors import UsageError


def cmd_replay(args) -> int:
    from dynfuzz.triage.corpus_replay import replay_command

    return replay_command(args.paths, args.workers, args.known)


def cmd_gate(args) -> int:
    from dynfuzz.gate import GateConfig, run_gate

    if args.cases < 0:
        raise UsageError("--cases must not be negative")
    if args.workers < 0:
        raise UsageError("--workers must be 0 or more")
    flags.refuse_stray_mutants(args)
    config = GateConfig(budget=parse_duration(args.budget), cases=args.cases, seed=args.seed,
                        spec=flags.compile_spec(args), families=flags.families(args.family),
                        corpus=[Path(c) for c in args.corpus],
                        out=flags.out_dir(args.out), junit=Path(args.junit) if args.junit else None,
                        summary=Path(args.summary) if args.summary else None, workers=args.workers,
                        known=args.known, minimize_budget=flags.minimize_budget(args), strict=args.strict,
                        pristine=args.pristine_torch)
    return run_gate(config)


def cmd_known(args) -> int:
    """`dynfuzz known --refresh | --check | add BUCKET [--upstream URL]`: known issues by bucket key."""
    from dynfuzz.triage import known as known_mod
    from dynfuzz.triage.repro import torch_version

    issues = flags.known_issues(args, must_exist=args.action != "add")
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


def add_parsers(sub) -> None:
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
    p.add_argument("--strict", action="store_true",
                   help="fail on a new refusal (a clean graph break under fullgraph) too, not only on a new "
                        "miscompile or crash")
    add_minimize_flags(p)
    add_compile_flags(p)
    flags.add_pristine_flag(p, default=True)
    p.set_defaults(func=cmd_gate)

    p = sub.add_parser("known", help="known issues by bucket key: list, --refresh, --check, add BUCKET")
    p.add_argument("action", nargs="?", choices=("add",), help="add: promote a campaign bucket to a known issue")
    p.add_argument("bucket", nargs="?", help="with add: the bucket folder, OUT/findings/<slug>-<id>")
    p.add_argument("--upstream", default=None, help="with add: the upstream issue URL")
    p.add_argument("--refresh", action="store_true", help="recompute every key from its corpus repro")
    p.add_argument("--check", action="store_true", help="exit 1 when a repro no longer produces its key")
    add_corpus_flags(p)
    p.set_defaults(func=cmd_known)
