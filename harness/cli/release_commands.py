"""`dynfuzz releases`: which torch releases a bug affects (docs/releases.md).

    dynfuzz releases check PATH... --torch 2.5.1,2.13.0,2.14.1 [--bisect] [--jobs N] [--json FILE]
    dynfuzz releases install R [--from VENV]      build (or adopt) one release's environment
    dynfuzz releases list | available | remove R
"""
from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from dynfuzz.errors import UsageError


def _log(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def _store():
    """The release environments. A build's start is shown on a terminal only, so that what a script reads of a
    release that cannot be installed is the one error line."""
    from dynfuzz.releases.environments import EnvStore

    return EnvStore(log=_log, progress=_log if sys.stderr.isatty() else lambda line: None)


def parse_releases(text: str) -> list[str]:
    """`--torch 2.5.1,2.13.0`: releases, each checked, duplicates dropped, in the order given."""
    from dynfuzz.releases.environments import check_release

    releases = []
    for part in (p.strip() for p in text.split(",")):
        if not part:
            continue
        check_release(part)
        if part not in releases:
            releases.append(part)
    if not releases:
        raise UsageError("--torch needs at least one release, e.g. --torch 2.13.0,2.14.1")
    return releases


def cmd_check(args) -> int:
    from dynfuzz.releases.bisect import narrow
    from dynfuzz.releases.campaign_folder import write_back
    from dynfuzz.releases.matrix import format_table, run_matrix
    from dynfuzz.releases.repros import discover

    releases = parse_releases(args.torch)
    if args.jobs < 1:
        raise UsageError("--jobs must be 1 or more")
    if args.confirm < 0:
        raise UsageError("--confirm must be 0 or more")
    found = discover(args.paths)
    if not found.repros:
        raise UsageError("no repros found in " + ", ".join(args.paths))
    if found.seeds_left_out:
        _log(f"releases: {found.seeds_left_out} seed scenario(s) (status passing) left out: they are not bugs")
    with _store() as store:
        for rel in releases:  # every release known before the first (long) install starts
            if store.read(rel) is None:
                store.known_release(rel)
        envs = {rel: store.get(rel) for rel in releases}
        _log(f"releases: {len(found.repros)} repro(s) on {len(envs)} release(s), {args.jobs} at a time")
        rows = run_matrix(found.repros, envs, args.jobs, args.confirm, progress=_log)
        if args.bisect:
            available = store.available()
            if available is None:
                _log("releases: --bisect: pip cannot list the installable torch releases here; not bisected")
            else:
                for row in rows:
                    narrow(row, store, available, args.confirm, log=_log)
    builds = {rel: env.torch for rel, env in envs.items()}
    print(format_table(rows, releases, builds))
    for campaign in found.campaigns:
        summary = write_back(campaign, [r for r in rows if r.repro.campaign == campaign], builds)
        print(f"wrote the matrix into {campaign}/summary.json, its bucket reports and its report "
              f"({summary['releases']['fixed']} bucket(s) fixed in a newer release, {summary['bugs']} bug(s))")
    if args.record:
        from dynfuzz.releases.known_record import record
        from dynfuzz.triage.known import KnownIssues

        known = KnownIssues.load(Path(args.known) if args.known else None)
        if known.path is None or not known.path.exists():
            raise UsageError("--record needs a known-issues file: pass --known FILE")
        changes = record(known, [r.as_json() for r in rows])
        known.save()
        print(f"recorded in {known.path}: {len(changes)} entr{'y' if len(changes) == 1 else 'ies'} changed")
        for line in changes:
            print(f"  {line}")
    if args.json:
        Path(args.json).write_text(json.dumps({"releases": releases, "builds": builds,
                                               "rows": [r.as_json() for r in rows]}, indent=1) + "\n")
    return 0


def cmd_install(args) -> int:
    with _store() as store:
        env = store.get(args.release, Path(args.source) if args.source else None)
    print(f"torch {env.release}: {env.torch} in {env.folder} (checkout {env.checkout} at {env.commit[:12]})")
    return 0


def cmd_list(args) -> int:
    import time

    with _store() as store:
        listing = store.listing()
        if not listing:
            print(f"no release environments in {store.root}")
            return 0
        print(f"{store.root} ({store.total_size() / 2**30:.1f} GiB of {store.cap / 2**30:.0f} GiB)")
        for rel, env in listing:
            if env is None:
                print(f"{rel:<9} half-built (rebuilt when next needed)")
                continue
            age = (time.time() - env.last_used) / 3600
            origin = f", over {env.adopted_from}" if env.adopted_from else ""
            print(f"{rel:<9} {env.torch:<16} {env.size_bytes / 2**30:5.1f} GiB  used {age:.1f} h ago  "
                  f"commit {env.commit[:12]}{origin}")
    return 0


def cmd_available(args) -> int:
    with _store() as store:
        listed = store.available()
    if listed is None:
        raise UsageError("pip cannot list the installable torch releases here (`pip index versions torch` failed)")
    print(" ".join(listed))
    return 0


def cmd_remove(args) -> int:
    with _store() as store:
        if not store.remove(args.release):
            raise UsageError(f"no environment for torch {args.release} in {store.root}")
    print(f"removed torch {args.release}")
    return 0


def add_parsers(sub) -> None:
    p = sub.add_parser("releases", help="which torch releases a bug affects: a release matrix, release environments")
    rs = p.add_subparsers(dest="releases_command", required=True, parser_class=type(p))

    c = rs.add_parser("check", help="run repros on several torch releases: outcome per release and a verdict")
    c.add_argument("paths", nargs="+", help="repro files, bucket folders, campaign folders or corpus folders")
    c.add_argument("--torch", required=True, help="comma-separated releases, e.g. 2.5.1,2.13.0,2.14.1")
    c.add_argument("--bisect", action="store_true",
                   help="narrow each regression or fix over every installable release in between")
    c.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="repro runs at a time (default: cores)")
    c.add_argument("--confirm", type=int, default=3,
                   help="extra runs, each in a fresh process, that confirm a pass deciding a verdict (default 3)")
    c.add_argument("--json", default=None, help="also write the matrix as JSON here")
    c.add_argument("--record", action="store_true",
                   help="record in known_issues.toml, per checked entry, the releases where it reproduces and "
                        "`fixed_in`")
    c.add_argument("--known", default=None, help="with --record: the known-issues TOML (default: the corpus's)")
    c.set_defaults(func=cmd_check)

    i = rs.add_parser("install", help="build one release's environment (or adopt an existing one with --from)")
    i.add_argument("release")
    i.add_argument("--from", dest="source", default=None,
                   help="an existing virtual environment holding this torch release, layered over, not copied")
    i.set_defaults(func=cmd_install)

    rs.add_parser("list", help="the release environments, their sizes and when each was last used"
                  ).set_defaults(func=cmd_list)
    rs.add_parser("available", help="the torch releases pip can install here").set_defaults(func=cmd_available)
    r = rs.add_parser("remove", help="remove one release's environment")
    r.add_argument("release")
    r.set_defaults(func=cmd_remove)
