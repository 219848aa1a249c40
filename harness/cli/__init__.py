"""The `dynfuzz` command line: one tool, a verb per use.

The verbs live in modules by use: `campaign_commands` (fuzz, merge, report), `program_commands` (sample,
check, minimize, selfcheck), `corpus_commands` (replay, gate, known) and `release_commands` (releases); each
adds its parsers here. Flags
shared between verbs, and their validation into configuration, are in `flags`.

Exit codes: 0 success, 1 a divergence was found (where that is the question), 2 usage or input error, reported
as one line on stderr, 3 an internal dynfuzz error (one line; the traceback goes to a file), 128+N a campaign
stopped by signal N (SIGTERM, Ctrl-C) after writing its results.
"""
from __future__ import annotations

import argparse
import os
import re
import sys

from dynfuzz.errors import UsageError


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


def build_parser() -> argparse.ArgumentParser:
    from dynfuzz.cli import campaign_commands, corpus_commands, program_commands, release_commands

    parser = _Parser(prog="dynfuzz", description="Differential fuzzing for torch.compile.")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    for module in (campaign_commands, program_commands, corpus_commands, release_commands):
        module.add_parsers(sub)
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

    from dynfuzz.campaign.workers import WorkerStartError

    if isinstance(e, WorkerStartError):
        print(f"dynfuzz: internal error: {e}", file=sys.stderr)
        return 3
    fd, path = tempfile.mkstemp(prefix="dynfuzz-internal-error-", suffix=".txt")
    with os.fdopen(fd, "w") as fh:
        traceback.print_exception(e, file=fh)
    first = str(e).strip().splitlines()[0][:200] if str(e).strip() else ""
    print(f"dynfuzz: internal error: {type(e).__name__}: {first} (traceback in {path})", file=sys.stderr)
    return 3
