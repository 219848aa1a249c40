"""`dynfuzz fuzz`, `merge` and `report`: running a campaign and reading campaign folders."""
from __future__ import annotations

import argparse
import json
import os
import signal
import sys
from pathlib import Path

from dynfuzz.budget import parse_duration
from dynfuzz.cli import flags
from dynfuzz.cli.flags import add_compile_flags, add_corpus_flags, add_minimize_flags
from dynfuzz.errors import UsageError


def cmd_fuzz(args) -> int:
    from dynfuzz.campaign.campaign import Campaign, CampaignConfig
    from dynfuzz.campaign.out_folder import claim
    from dynfuzz.campaign.resume import flags_of
    from dynfuzz.releases.known_verifier import verifying
    from dynfuzz.run.torch_compat import pristine_tree

    budget = parse_duration(args.budget or "60s")
    resume = _resume(args)
    if resume is not None and args.budget is None:  # the time the original budget had left
        budget = max(resume.remaining_budget, 10.0)
    if args.resume and args.overwrite:
        raise UsageError("--resume continues the campaign in its folder; --overwrite would empty it: pick one")
    flags.refuse_stray_mutants(args)
    if args.workers < 0:
        raise UsageError("--workers must be 0 or more")
    if args.cases is not None and args.cases < 0:
        raise UsageError("--cases must not be negative")
    # Every flag and input is checked before the folder is looked at or made: a mistyped flag is reported as
    # such (not as an earlier campaign in --out), and a refused start leaves no folder behind.
    settings = dict(resume=resume, budget=budget, seed=args.seed, spec=flags.compile_spec(args),
                    families=flags.families(args.family), workers=args.workers, max_cases=args.cases,
                    case_timeout=parse_duration(args.case_timeout),
                    known=verifying(flags.known_issues(args)), progress=args.progress,
                    **flags.scale_options(args),
                    coverage=flags.coverage_spec(args), guided=args.guided, swarm=flags.swarm(args),
                    worker_memory=flags.worker_memory(args), minimize_budget=flags.minimize_budget(args))
    out = flags.out_dir(args.out)
    lock = claim(out, resume=resume is not None, overwrite=args.overwrite)  # noqa: F841  (held while it runs)
    config = CampaignConfig(out=out, flags=flags_of(args), **settings)
    with pristine_tree(flags.pristine(args)):
        summary = Campaign(config).run()
    print(json.dumps({k: summary[k] for k in ("cases", "cases_per_second", "findings", "unique", "bugs",
                                               "overhead_fraction")}))
    if args.fail_on_finding and summary["unique"]:
        return 1
    stopped = summary.get("stopped_by")
    return 128 + signal.Signals[stopped].value if stopped else 0


def _resume(args):
    """`--resume DIR`: the saved campaign's state, its settings written into `args` (campaign/resume.py)."""
    from dynfuzz.campaign.resume import DEFAULTS, FLAGS, SETTINGS, apply_settings, load
    from dynfuzz.cli import build_parser

    if args.resume is None:
        return None
    defaults = build_parser().parse_args(["fuzz"])
    if args.out != defaults.out and Path(args.out).resolve() != Path(args.resume).resolve():
        raise UsageError(f"--resume {args.resume} continues in that directory; --out {args.out} conflicts")
    state = load(Path(args.resume))
    given = {dest for dest in [*SETTINGS.values(), *DEFAULTS.values(), *FLAGS, "minimize_budget", "no_minimize"]
             if getattr(args, dest) != getattr(defaults, dest)}
    apply_settings(state, args, given)
    args.out = args.resume
    return state


def cmd_triage(args) -> int:
    """`dynfuzz triage DIR [--budget 10m] [--workers N]`: finish a campaign's triage in its folder."""
    from dynfuzz.campaign.finish import finish_triage

    flags.refuse_stray_mutants(args)  # a stray variable would break torch, and triage file the breakage
    if args.workers < 1:
        raise UsageError("--workers must be 1 or more")
    out = Path(args.dir)
    if not out.is_dir():
        raise UsageError(f"no such campaign folder: {args.dir}")
    known = flags.known_issues(args) if (args.known or args.corpus) else None
    summary = finish_triage(out, parse_duration(args.budget), args.workers,
                            parse_duration(args.minimize_budget), known)
    statuses: dict[str, int] = {}
    for b in summary.get("buckets", []):
        statuses[b["status"]] = statuses.get(b["status"], 0) + 1
    print(json.dumps({"buckets": len(summary.get("buckets", [])), "statuses": statuses, "bugs": summary.get("bugs"),
                      "queued": summary.get("queued")}))
    return 0


def cmd_merge(args) -> int:
    from dynfuzz.merge import merge

    merged = merge(args.dirs, Path(args.out))
    print(json.dumps({k: merged.get(k) for k in ("runs", "cases", "cases_per_second", "findings", "unique")}))
    return 0


def cmd_report(args) -> int:
    from dynfuzz.report import write_report

    dirs = [Path(d) for d in args.dirs]
    if args.issue or args.bucket:
        if not (args.issue and args.bucket) or len(dirs) != 1:
            raise UsageError("--issue prints one bucket's issue body: give one DIR, --bucket ID and --issue")
        from dynfuzz.report.issue_body import find_bucket, issue_body

        row = find_bucket(dirs[0], args.bucket)
        if not row.get("releases") and not args.no_releases:
            from dynfuzz.releases.campaign_folder import check_bucket

            check_bucket(dirs[0], row, lambda line: print(line, file=sys.stderr, flush=True))
        print(issue_body(dirs[0], args.bucket), end="")
        return 0
    if args.out is None and len(dirs) > 1:
        raise UsageError("several campaigns are merged into one report: say where it goes with --out DIR")
    out = flags.out_dir(args.out) if args.out else dirs[0]
    if args.out is None:
        _rebuild_views(dirs[0])
    html, md = write_report(dirs, out, Path(args.since) if args.since else None)
    print(f"{html}\n{md}")
    return 0


def _rebuild_views(folder: Path) -> None:
    """`dynfuzz report DIR` on a journaled campaign: summary.json, findings/ and queue/ made again from its
    journal first (Note [The journal is the campaign]), under the folder's lock."""
    from dynfuzz.campaign.journal import has_journal
    from dynfuzz.campaign.journal_views import rebuild
    from dynfuzz.campaign.out_folder import claim

    if has_journal(folder):
        lock = claim(folder, resume=True, verb="report")
        try:
            rebuild(folder, report=False)
        finally:
            lock.close()


def add_parsers(sub) -> None:
    p = sub.add_parser("fuzz", help="run a campaign: progress, summary table, OUT/summary.json, OUT/findings/")
    p.add_argument("--budget", default=None,
                   help="wall-clock budget: 30s, 10m, 2h (default 60s; with --resume, what the campaign had left)")
    p.add_argument("--overwrite", action="store_true",
                   help="empty --out first when it holds an earlier campaign (without it, such a folder is refused)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--family", action="append", help="restrict to a family (repeatable)")
    p.add_argument("--out", default="dynfuzz-out")
    p.add_argument("--workers", type=int, default=1, help="worker processes (0: run in this process)")
    p.add_argument("--cases", type=int, default=None, help="stop after this many cases")
    p.add_argument("--case-timeout", default="300s", help="per-case limit before the case is a hang")
    add_corpus_flags(p)
    p.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None)
    p.add_argument("--fail-on-finding", action="store_true", help="exit 1 when any unique finding was saved")
    add_minimize_flags(p)
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
                   help="behaviour-guided generation: weight fragments and edit choice sequences that reached new "
                        "Dynamo behaviours (reproducible per case from OUT/guided/cases.jsonl, not as a stream)")
    p.add_argument("--swarm", action=argparse.BooleanOptionalAction, default=None,
                   help="swarm testing: every 16 seeds draw from a random half of the fragments and settings, and "
                        "fragments whose constructs a minimized bucket explains are drawn a quarter as often "
                        f"(default {'on' if flags.SWARM_DEFAULT else 'off'}; off with --guided)")
    add_compile_flags(p)
    flags.add_pristine_flag(p)
    p.set_defaults(func=cmd_fuzz)

    p = sub.add_parser("triage", help="finish the triage a campaign left: minimize, explain and localize its queued "
                                      "findings, updating summary.json, the buckets and the report in place")
    p.add_argument("dir", metavar="DIR", help="a campaign folder (with summary.json and queue/)")
    p.add_argument("--budget", default="10m", help="wall-clock budget (default 10m)")
    p.add_argument("--workers", type=int, default=1, help="triage processes (default 1)")
    p.add_argument("--minimize-budget", default="60s", help="seconds per job (default 60s)")
    add_corpus_flags(p)
    p.set_defaults(func=cmd_triage)

    p = sub.add_parser("merge", help="merge the summary.json of shards or runs into one (counts add, buckets united)")
    p.add_argument("dirs", nargs="+", metavar="DIR", help="run output folders (each with a summary.json)")
    p.add_argument("--out", required=True, help="where the merged summary.json and findings/ go")
    p.set_defaults(func=cmd_merge)

    p = sub.add_parser("report", help="self-contained HTML + Markdown report of one or several campaigns")
    p.add_argument("dirs", nargs="+", metavar="DIR", help="campaign folders (each with a summary.json)")
    p.add_argument("--since", default=None, metavar="PREV",
                   help="an earlier campaign folder: new buckets, buckets no longer seen and count changes first")
    p.add_argument("--out", default=None, help="where report.html and report.md go (default: the one DIR)")
    p.add_argument("--bucket", default=None, metavar="ID", help="with --issue: the bucket (id, key or folder name)")
    p.add_argument("--issue", action="store_true",
                   help="print the bucket's issue body (tier, component, labels, releases, plain repro) to paste; "
                        "its releases line is filled in first from the release environments installed, if any")
    p.add_argument("--no-releases", action="store_true",
                   help="with --issue: do not run the repro on the installed release environments")
    p.set_defaults(func=cmd_report)
