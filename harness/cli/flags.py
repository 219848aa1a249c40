"""Command-line flags shared between verbs (`add_*_flags`), and their values turned into configuration: a
compile spec, families, output folder, scale, coverage and memory options, known issues. Every bad value is
a one-line `UsageError` (exit 2) raised here, before anything runs, so each verb of `dynfuzz.cli` validates
the same flag the same way.
"""
from __future__ import annotations

import argparse
import os
import re
from pathlib import Path

from dynfuzz.budget import parse_duration
from dynfuzz.errors import UsageError
from dynfuzz.run.compilers import BACKENDS, COMPILE_DEFAULTS, DEVICES, CompileSpec


def compile_spec(args) -> CompileSpec:
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
        from dynfuzz.mutants import Unavailable, enable, load

        unknown = sorted(set(mutants) - set(load()))
        if unknown:
            raise UsageError(f"unknown mutant {unknown[0]!r}; choose from {', '.join(sorted(load())) or '(none)'}")
        try:
            enable(mutants)
        except Unavailable as e:
            raise UsageError(str(e)) from None
    guards = bool(getattr(args, "guards", False))
    reference = bool(getattr(args, "reference", False)) or guards
    backends, cross_device = layer_flags(args)
    return CompileSpec(args.compiler, backends[0] if backends else args.backend, args.device, args.fullgraph,
                       args.dynamic, reference, guards, backends, cross_device)


def layer_flags(args) -> tuple[tuple[str, ...], bool]:
    """`--backends a,b,c` (validated, in layer order) and `--cross-device` (which needs --device cuda)."""
    from dynfuzz.run.multi_backend import in_layer_order

    names = [b for b in (getattr(args, "backends", None) or "").split(",") if b]
    for name in names:
        if name not in BACKENDS:
            raise UsageError(f"unknown backend {name!r} in --backends; choose from {', '.join(BACKENDS)}")
    cross_device = bool(getattr(args, "cross_device", False))
    if cross_device and args.device == "cpu":
        raise UsageError("--cross-device compares a CUDA run against CPU eager: it needs --device cuda")
    return in_layer_order(names), cross_device


def families(names: list[str] | None) -> tuple[str, ...]:
    from dynfuzz.generators import family_names

    known = family_names()
    for name in names or ():
        if name not in known:
            raise UsageError(f"unknown family {name!r}; choose from {', '.join(known)}")
    return tuple(names or ())


def out_dir(path: str) -> Path:
    out = Path(path)
    try:
        out.mkdir(parents=True, exist_ok=True)
        probe = out / ".write-test"
        probe.write_text("")
        probe.unlink()
    except OSError as e:
        raise UsageError(f"cannot write to --out {path}: {e.strerror or e}") from None
    return out


def worker_memory(args) -> int | None:
    """--worker-memory in bytes: the flag, else half the RAM shared by the workers (none for CUDA)."""
    from dynfuzz.budget import parse_size
    from dynfuzz.run.isolation import default_worker_memory

    if args.worker_memory is not None:
        return parse_size(args.worker_memory)
    return default_worker_memory(args.workers, args.device)


def scale_options(args) -> dict:
    """`--db` (a directory or redis:// URL), `--db-expire`, `--shard I/N`, `--ray [ADDRESS]`, checked up front:
    an unreachable Redis or Ray, or Ray not installed, is a one-line usage error before anything runs."""
    match = re.fullmatch(r"(\d+)/(\d+)", args.shard or "1/1")
    if not match or not 1 <= int(match[1]) <= int(match[2]):
        raise UsageError(f"--shard {args.shard!r} is not I/N with 1 <= I <= N (e.g. --shard 2/4)")
    if args.db_expire <= 0:
        raise UsageError("--db-expire must be a positive number of days")
    database = None if args.no_db else args.db
    if database is not None:
        from dynfuzz.campaign.exampledb import is_redis_url, open_database

        if is_redis_url(database):
            open_database(database, args.db_expire)  # reachable now, within the client's timeouts
        else:
            database = Path(database)
            if database.exists() and not database.is_dir():
                raise UsageError(f"--db {database} is a file; it must be a directory (or a redis:// URL)")
    if args.ray is not None:
        from dynfuzz.campaign.cluster import check_address

        if args.coverage or args.guided or args.coverage_scope:
            raise UsageError("--coverage and --guided measure local workers; they cannot be combined with --ray")

        check_address(args.ray)
    return {"database": database, "db_expire_days": args.db_expire, "shard": (int(match[1]), int(match[2])),
            "ray": args.ray}


def coverage_spec(args):
    """`--coverage` / `--coverage-scope` as a CoverageSpec, or None. (`--guided` steers by Dynamo's behaviours
    and measures no lines; it is checked here too.)"""
    from dynfuzz.campaign.line_coverage import DEFAULT_SCOPES, CoverageSpec, package_dir

    scopes = tuple(args.coverage_scope or ())
    if args.guided and any(getattr(args, flag, None) for flag in ("shard", "resume")):
        raise UsageError("--guided cannot be combined with --shard or --resume: they need the deterministic stream")
    if not (args.coverage or args.guided or scopes):
        return None
    if getattr(args, "ray", None) is not None:
        raise UsageError("--coverage and --guided run on local workers only, not with --ray")
    if getattr(args, "shard", None):  # a shard's lines are part of a campaign's, and `merge` cannot unite them
        raise UsageError("--coverage measures a whole campaign's workers: it cannot be combined with --shard")
    if not (args.coverage or scopes):
        return None
    for scope in scopes:
        if package_dir(scope) is None:
            raise UsageError(f"--coverage-scope {scope!r} is not an importable package")
    return CoverageSpec(Path(args.out) / "coverage", tuple(dict.fromkeys(DEFAULT_SCOPES + scopes)))


SWARM_DEFAULT = False  # `fuzz` without --swarm/--no-swarm (measured: docs/commands.md, "Swarm testing")


def swarm(args) -> bool:
    """`--swarm/--no-swarm`; unset: SWARM_DEFAULT, and off with --guided (both steer which fragments are drawn)."""
    if args.swarm and args.guided:
        raise UsageError("--swarm and --guided both steer which fragments are drawn: pick one")
    if args.swarm is None:
        return SWARM_DEFAULT and not args.guided
    return bool(args.swarm)


def minimize_budget(args) -> float | None:
    """`--minimize-budget` seconds per new bucket in the triage worker; None with `--no-minimize`."""
    if args.no_minimize:
        return None
    budget = parse_duration(args.minimize_budget)
    if budget <= 0:
        raise UsageError("--minimize-budget must be positive (use --no-minimize to switch minimization off)")
    return budget


def known_issues(args, must_exist: bool = True):
    """The known issues a command reads: `--known FILE`, else `known_issues.toml` of the corpus folder
    (`--corpus DIR`, `$DYNFUZZ_CORPUS` or the editable checkout; see `dynfuzz.paths`). A `--known` file that is
    not there is a usage error (a campaign once ran silently without its known issues), unless `must_exist` is
    off (`known add` may start a new file)."""
    from dynfuzz.paths import known_issues_file
    from dynfuzz.triage.known import KnownIssues

    if getattr(args, "known", None):
        if must_exist and not Path(args.known).is_file():
            raise UsageError(f"--known {args.known}: no such file")
        return KnownIssues.load(Path(args.known))
    path = known_issues_file(getattr(args, "corpus", None))
    return KnownIssues.load(path) if path is not None else KnownIssues()


def add_compile_flags(p: argparse.ArgumentParser, defaults: bool = True) -> None:
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


def add_pristine_flag(p: argparse.ArgumentParser, default: bool | None = None) -> None:
    """`--pristine-torch/--no-pristine-torch`; None (unset) follows DYNFUZZ_PRISTINE_TORCH."""
    p.add_argument("--pristine-torch", action=argparse.BooleanOptionalAction, default=default,
                   help="run torch as shipped, without dynfuzz's two speed-ups of Dynamo's logging (slower; recorded "
                        f"in summary.json torch_patches; default {'on' if default else 'off'})")


def pristine(args) -> bool:
    """`--pristine-torch`, or DYNFUZZ_PRISTINE_TORCH already set by whoever started dynfuzz (`--no-pristine-torch`
    overrides both)."""
    from dynfuzz.run.torch_compat import pristine as inherited

    return inherited() if args.pristine_torch is None else bool(args.pristine_torch)


def refuse_stray_mutants(args) -> None:
    """A top-level `fuzz` or `gate` started with DYNFUZZ_MUTANTS set refuses to run unless `--mutant` names the
    same mutants: a stray variable would break torch and file the breakage as torch bugs. (The processes dynfuzz
    spawns inherit the variable on purpose and never come through here.)"""
    from dynfuzz.mutants import ENV

    inherited = sorted({n for n in os.environ.get(ENV, "").split(",") if n})
    asked = sorted(set(getattr(args, "mutant", None) or ()))
    if inherited and inherited != asked:
        raise UsageError(f"{ENV}={','.join(inherited)} is set in the environment, but --mutant names "
                         f"{','.join(asked) or 'none'}: unset it, or pass the same mutants with --mutant")


def add_corpus_flags(p) -> None:
    p.add_argument("--corpus", default=None, metavar="DIR",
                   help="the corpus folder (default: $DYNFUZZ_CORPUS, else corpus/ of the editable checkout)")
    p.add_argument("--known", default=None, help="known-issues TOML (default: known_issues.toml in the corpus folder)")


def add_minimize_flags(p) -> None:
    p.add_argument("--minimize-budget", default="60s",
                   help="minimize each new bucket in a worker process for at most this long (default 60s)")
    p.add_argument("--no-minimize", action="store_true",
                   help="do not minimize: buckets keep their cheap keys and are marked unminimized")


def fill_spec_from(args, meta: dict) -> CompileSpec:
    """Compile flags left unset on the command line come from a saved file's metadata."""
    for flag, default in COMPILE_DEFAULTS.items():
        if getattr(args, flag) is None:
            setattr(args, flag, meta.get(flag, default))
    return compile_spec(args)
