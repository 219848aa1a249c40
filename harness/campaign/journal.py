"""A campaign's journal: `OUT/journal.jsonl`, every fact the campaign learned, appended, never rewritten.

Note [The journal is the campaign]
A campaign folder used to keep its state in files rewritten at different times (summary.json, bucket folders
moved and merged by triage, the queue, in-memory ledgers), and a kill between two of those writes lost a
finding. Now one file is the record: each fact is one JSON line, written, flushed and fsynced *before* the
campaign acts on it (files an example, drops a queued job, renames a bucket). Facts are never rewritten; a
later fact supersedes an earlier one explicitly (the last `progress` holds the counts, a `triage` result
moves its identity). Everything else in the folder (summary.json, findings/, queue/, the report) is a view
that `journal_views.rebuild` makes again from this file alone: `dynfuzz report DIR` does, `--resume` and
`dynfuzz triage` replay it, so deleting summary.json or findings/ loses nothing.

Facts (`fact` names the kind; `at` is the Unix time it was written):
- `settings`: what the campaign started with (the settings fields of summary.json, and the flags `--resume`
  takes over); `resume`: a resumed run's start (its budget, the total budget after it);
- `finding`: one finding of one case: its identity, and on the identity's first fact its program and finding
  (`case`, `finding`: pickled, base64) beside their readable fields; `known`: the known-issue verdict on a key;
- `triage`: a triage (or localization) result for an identity (`payload` pickled as it came back);
- `harness-error`, `progress` (the counts and the process fields of summary.json, superseding the last),
  `triage-run` (a `dynfuzz triage` run), `release` (a `dynfuzz releases check` verdict per bucket),
  `stop` (how a run ended: `stopped_by`, `unfinished`).
Pickles are read back by the same dynfuzz on the same torch (`--resume`, `dynfuzz triage` refuse another);
every path a fact holds is relative to OUT.
"""
from __future__ import annotations

import base64
import json
import os
import pickle
import time
from pathlib import Path
from typing import IO, Any

from dynfuzz.errors import UsageError

JOURNAL = "journal.jsonl"


def journal_path(out: Path) -> Path:
    return Path(out) / JOURNAL


def has_journal(out: Path) -> bool:
    return journal_path(out).is_file()


def encode(obj: Any) -> str:
    """`obj` pickled, as text for a JSON line."""
    return base64.b64encode(pickle.dumps(obj)).decode("ascii")


def decode(text: str) -> Any:
    return pickle.loads(base64.b64decode(text.encode("ascii")))


def relative(out: Path, path: Path | str | None) -> str | None:
    """`path` relative to the campaign folder `out` (summary.json and the journal never depend on the working
    directory of the command that wrote them)."""
    if path is None:
        return None
    p = Path(path)
    try:
        return os.path.relpath(p.resolve(), Path(out).resolve())
    except ValueError:  # another drive (Windows): keep it absolute
        return str(p.resolve())


class Journal:
    """Appends facts to `OUT/journal.jsonl`, each flushed and fsynced before `append` returns."""

    def __init__(self, out: Path) -> None:
        self.path = journal_path(out)
        self._handle: IO[str] | None = None

    def append(self, fact: str, **data: Any) -> dict[str, Any]:
        row = {"fact": fact, "at": round(time.time(), 3), **data}
        line = json.dumps(row, separators=(",", ":"), default=str) + "\n"
        if self._handle is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._handle = open(self.path, "a", encoding="utf-8")
            if self._handle.tell() > 0 and not _ends_with_newline(self.path):
                self._handle.write("\n")  # a torn last line of a killed run stays a line of its own
        self._handle.write(line)
        self._handle.flush()
        os.fsync(self._handle.fileno())
        return row

    def close(self) -> None:
        if self._handle is not None:
            self._handle.close()
            self._handle = None


def _ends_with_newline(path: Path) -> bool:
    with open(path, "rb") as f:
        f.seek(-1, os.SEEK_END)
        return f.read(1) == b"\n"


def read_journal(out: Path) -> list[dict[str, Any]]:
    """Every fact of `OUT/journal.jsonl`, in order. A line a kill tore (no newline, or not JSON) is skipped: its
    fact was never acted on. A missing journal is a usage error."""
    path = journal_path(out)
    if not path.is_file():
        raise UsageError(f"{out}: no {JOURNAL} there (not a campaign folder, or one written by an older dynfuzz)")
    facts = []
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            if not line.endswith("\n"):
                break  # the last line, torn by a kill
            try:
                row = json.loads(line)
            except json.JSONDecodeError:
                continue
            if isinstance(row, dict) and isinstance(row.get("fact"), str):
                facts.append(row)
    return facts


def last(facts: list[dict[str, Any]], kind: str) -> dict[str, Any] | None:
    """The latest fact of `kind` (the one that supersedes the others), or None."""
    for row in reversed(facts):
        if row["fact"] == kind:
            return row
    return None


def settings_fact(facts: list[dict[str, Any]], out: Path) -> dict[str, Any]:
    row = next((r for r in facts if r["fact"] == "settings"), None)
    if row is None:
        raise UsageError(f"{out}: its journal holds no settings (the campaign was killed before it started)")
    return row["settings"]
