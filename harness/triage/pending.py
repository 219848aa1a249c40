"""Findings waiting for triage, kept on disk: `OUT/queue/<id>.pkl` (the case, the finding, why and how urgently
it waits) beside `<id>.py` (the program as a repro a person can run).

Note [Nothing waits only in memory]
A finding handed to triage is written here before it is queued, and removed only once its triage result has
been applied to the bucket folders. So a campaign that ends (or dies) before its queue drained leaves every
untriaged finding on disk, suspects included, and `dynfuzz triage DIR` picks them up, in priority order, on as
many workers as it is given. Jobs are pickled: they are read back by the same dynfuzz, on the same torch
(`dynfuzz triage` refuses another release), never by anything else.
"""
from __future__ import annotations

import hashlib
import pickle
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dynfuzz.generators.case import Case
from dynfuzz.oracles import Finding

# Priorities, most urgent first: a cheap key never seen before (a new bucket is waiting for its key), then a
# suspect (a finding whose signature or cheap key is filed already: most are the same bug through other text),
# then the localization of an explained bucket (it only refines a key).
NEW, SUSPECT, LOCALIZE = 0, 1, 2
PRIORITY_NAMES = {NEW: "new cheap key", SUSPECT: "suspect", LOCALIZE: "localization"}


@dataclass
class Job:
    """One triage job: the finding's identity (or `localize <key>`), its case and finding, and its priority."""

    ident: str
    case: Case
    finding: Finding
    priority: int = NEW
    meta: dict[str, Any] = field(default_factory=dict)

    @property
    def file_id(self) -> str:
        return hashlib.sha256(self.ident.encode()).hexdigest()[:16]


class PendingJobs:
    """The on-disk copy of a campaign's triage queue (see Note [Nothing waits only in memory])."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def save(self, job: Job, program_text: str | None = None) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        base = self.folder / job.file_id
        tmp = base.with_suffix(".tmp")
        tmp.write_bytes(pickle.dumps(job))
        tmp.replace(base.with_suffix(".pkl"))
        if program_text is not None:
            base.with_suffix(".py").write_text(program_text)

    def done(self, ident: str) -> None:
        base = self.folder / hashlib.sha256(ident.encode()).hexdigest()[:16]
        base.with_suffix(".pkl").unlink(missing_ok=True)
        base.with_suffix(".py").unlink(missing_ok=True)

    def load(self) -> list[Job]:
        """Every job still waiting, most urgent first (then in the order they were queued)."""
        jobs = []
        for path in sorted(self.folder.glob("*.pkl"), key=lambda p: p.stat().st_mtime):
            try:
                jobs.append(pickle.loads(path.read_bytes()))
            except (pickle.UnpicklingError, EOFError, AttributeError, ImportError):
                continue  # a half-written file of a killed campaign: its finding is still in the bucket folders
        return sorted(jobs, key=lambda j: j.priority)

    def __len__(self) -> int:
        return len(list(self.folder.glob("*.pkl"))) if self.folder.is_dir() else 0
