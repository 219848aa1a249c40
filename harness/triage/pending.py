"""Findings waiting for triage, kept on disk: `OUT/queue/<id>.pkl` (the case, the finding, why and how urgently
it waits) beside `<id>.py` (the program as a repro a person can run).

Note [Nothing waits only in memory]
A finding handed to triage is written here before it is queued, and removed only once its triage result has
been applied to the bucket folders. So a campaign that ends (or dies) before its queue drained leaves every
untriaged finding on disk, suspects included, and `dynfuzz triage DIR` picks them up, in the order of
`job_rank` (Note [Which finding is triaged first]), on as many workers as it is given. Jobs are pickled: they are
read back by the same dynfuzz, on the same torch (`dynfuzz triage` refuses another release), never by anything else.
"""
from __future__ import annotations

import hashlib
import pickle
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dynfuzz.generators.case import Case
from dynfuzz.oracles import Finding
from dynfuzz.triage.buckets import divergence_class, tier_of

# Priorities, most urgent first: a cheap key never seen before (a new bucket is waiting for its key), then a
# suspect (a finding whose signature or cheap key is filed already: most are the same bug through other text),
# then the localization of an explained bucket (it only refines a key).
NEW, SUSPECT, LOCALIZE = 0, 1, 2
PRIORITY_NAMES = {NEW: "new cheap key", SUSPECT: "suspect", LOCALIZE: "localization"}
NEW_KEY = "new_key"  # a suspect's `meta` flag: the first suspect of a cheap key no bucket has

# Note [Which finding is triaged first]
# A campaign on a torch with many faults finds more than its triage lanes get through, so the order decides which
# buckets end up minimized. The bug tiers come first, and among them every new cheap key (a bucket nothing
# minimized yet) before any suspect (most are a filed bug reached again): miscompiles' new keys, crashes' new keys,
# miscompiles' suspects, crashes' suspects. A suspect that is the first of a cheap key no bucket has (only its
# signature matched an earlier finding's: the outputs oracle's signature is generic) ranks between the two: if it
# is never reached, the campaign's end files it as a bucket of its own, unminimized, whereas a suspect of a filed
# key only waits for its own triage. Then the localization of explained miscompiles (it refines a key that
# is already explained), then refusals, extra recompiles and dynfuzz's own, by tier, a new key before a suspect.
# Within a rank the newest job goes first: the common faults are found early and again and again, so a job that
# has waited long is more often another way into a fault a later job of the same rank explains anyway, while the
# newest jobs come from the mix as swarm testing and the down-weighting of explained constructs have moved it
# (campaign/swarm_weights.py). The tier is the finding's class as found (`divergence_class`): triage may name
# another.
# On 2.13 a 500-case run ended with 9 of its 10 bug buckets unminimized while 5 refusal buckets were minimized,
# because jobs were served first come first served within NEW. On 2.5.1, with the tier ahead of new-or-suspect,
# a 20-minute run triaged 132 miscompile jobs, most of them suspects, while a crash found at 5 s waited: 14 of
# its 24 crash jobs ran after the budget, in the drain, and two crash buckets ended unminimized. With new keys
# first, 7 of the 8 bug buckets a 2.5.1 run left unminimized were wrong values whose findings came as suspects in
# the first 8 s only because the outputs oracle's signature was seen: the oldest jobs of the suspects' rank.
_RANKED_TIERS = ("miscompile", "crash", "localization", "refusal", "performance", "dynfuzz")
_BUG_TIERS = ("miscompile", "crash")
QUEUED = "queued"  # the `meta` entry holding when a job was queued (time.time()), for newest-first within a rank


def identity(signature: str, cheap_key: str) -> str:
    """What makes a finding new in a campaign: its signature together with its cheap bucket key."""
    return f"{signature} {cheap_key}"


def job_rank(priority: int, finding: Finding | None, meta: dict[str, Any] | None = None) -> tuple[int, int, int]:
    """The sort key of a waiting job, most urgent first (see Note [Which finding is triaged first]): the bug tiers'
    new keys (0), their suspects of a key no bucket has (1), their other suspects (2), then the rest by tier (3)."""
    if priority == LOCALIZE:
        return 3, _RANKED_TIERS.index("localization"), 0
    tier = tier_of(divergence_class(finding)) if finding is not None else "dynfuzz"
    index = _RANKED_TIERS.index(tier if tier in _RANKED_TIERS else "dynfuzz")
    if tier in _BUG_TIERS:
        return (0 if priority == NEW else 1 if (meta or {}).get(NEW_KEY) else 2), index, priority
    return 3, index, priority


def ranks_a_bug(rank: tuple) -> bool:
    """Whether a `job_rank` sort key is a miscompile's or a crash's (the tiers that count as bugs)."""
    return rank[0] < 3


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
        """Write `job` (stamping when it was queued into its `meta`, which the triage pool orders by)."""
        job.meta.setdefault(QUEUED, time.time())
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
        """Every job still waiting, most urgent first (Note [Which finding is triaged first]). A job saved before
        jobs were stamped counts as queued when its file was written."""
        jobs = []
        for path in self.folder.glob("*.pkl"):
            try:
                job = pickle.loads(path.read_bytes())
                job.meta.setdefault(QUEUED, path.stat().st_mtime)
            except (pickle.UnpicklingError, EOFError, AttributeError, ImportError):
                continue  # a half-written file of a killed campaign: its finding is still in the bucket folders
            jobs.append(job)
        return sorted(jobs, key=lambda j: (job_rank(j.priority, j.finding, j.meta), -j.meta[QUEUED]))

    def __len__(self) -> int:
        return len(list(self.folder.glob("*.pkl"))) if self.folder.is_dir() else 0
