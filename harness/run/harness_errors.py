"""Harness errors: cases dynfuzz could not judge, filed apart from torch findings.

A generator that raised, a program whose `inputs()` failed, an oracle or a snapshot that broke, a case
that reached the worker's memory limit: each is a record `OUT/harness-errors/<kind>-<seed>.txt` with the
seed, the command that redraws the case, the traceback and the program, and a count by kind in
`summary.json` `harness_errors`. None of them is ever a torch finding, and none stops the campaign.
Records are bounded (`per_kind` files per kind) so a generator bug hit every few cases cannot fill the disk;
counts stay exact.
"""
from __future__ import annotations

import traceback as tb
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dynfuzz.errors import HARNESS_ERROR_KINDS, CaseError


@dataclass(frozen=True)
class HarnessError:
    """One case dynfuzz could not judge: the stage that failed (`kind`), a one-line message, the traceback."""

    kind: str
    message: str
    traceback: str = ""

    @classmethod
    def from_exception(cls, e: BaseException, kind: str | None = None) -> HarnessError:
        """The record for a live exception; a `CaseError` names its own kind and its cause's traceback."""
        if kind is None:
            kind = e.kind if isinstance(e, CaseError) else "internal"
        cause = e.__cause__ if isinstance(e, CaseError) and e.__cause__ is not None else e
        text = "".join(tb.format_exception(type(cause), cause, cause.__traceback__))[-8000:]
        first = str(e).strip().splitlines()[0][:300] if str(e).strip() else ""
        return cls(kind, f"{type(e).__name__}: {first}", text)

    def as_payload(self) -> dict[str, str]:
        return {"kind": self.kind, "message": self.message, "traceback": self.traceback}

    @classmethod
    def from_payload(cls, payload: Any) -> HarnessError:
        """A worker's report; an old-style string payload is an internal error."""
        if isinstance(payload, dict):
            return cls(payload.get("kind", "internal"), payload.get("message", ""), payload.get("traceback", ""))
        return cls("internal", str(payload))


class HarnessErrorLog:
    """Counts harness errors by kind and writes a bounded number of records under `directory`."""

    def __init__(self, directory: Path, per_kind: int = 50) -> None:
        self.directory, self.per_kind = directory, per_kind
        self.counts: Counter[str] = Counter()
        self.rows: list[dict[str, Any]] = []

    def record(self, error: HarnessError, seed: int | None, families: tuple[str, ...] = (),
               source: str | None = None) -> Path | None:
        """Count `error`; write its record unless this kind already has `per_kind` of them."""
        self.counts[error.kind] += 1
        path = None
        if self.counts[error.kind] <= self.per_kind:
            self.directory.mkdir(parents=True, exist_ok=True)
            path = self.directory / f"{error.kind}-{seed if seed is not None else 'noseed'}.txt"
            path.write_text(_render(error, seed, families, source))
        if len(self.rows) < 200:
            self.rows.append({"kind": error.kind, "seed": seed, "message": error.message,
                              "file": str(path) if path else None})
        return path

    def summary(self) -> dict[str, int]:
        return dict(sorted(self.counts.items()))


def redraw_command(seed: int | None, families: tuple[str, ...]) -> str:
    if seed is None:
        return "(no seed: a replayed or hand-written case)"
    return "dynfuzz sample --case-seed " + " ".join([str(seed), *(f"--family {f}" for f in families)])


def _render(error: HarnessError, seed: int | None, families: tuple[str, ...], source: str | None) -> str:
    lines = [
        f"# dynfuzz harness error: {error.kind} ({HARNESS_ERROR_KINDS.get(error.kind, 'unclassified')})",
        "# Not a torch finding: dynfuzz could not judge this case.",
        f"# seed: {seed}",
        f"# families: {list(families)}",
        f"# redraw: {redraw_command(seed, families)}",
        f"# message: {error.message}",
        "",
        error.traceback.rstrip() or "(no traceback)",
    ]
    if source:
        lines += ["", "# ---- the program ----", source.rstrip()]
    return "\n".join(lines) + "\n"
