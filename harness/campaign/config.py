"""A campaign's settings (`dynfuzz fuzz`'s flags, resolved), in a module of their own: the campaign, its
journal's views and `--resume` all read them."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dynfuzz.campaign.line_coverage import CoverageSpec
from dynfuzz.campaign.resume import ResumeState
from dynfuzz.run.compilers import CompileSpec
from dynfuzz.triage.known import KnownIssues


@dataclass
class CampaignConfig:
    budget: float
    out: Path
    seed: int = 0
    spec: CompileSpec = field(default_factory=CompileSpec)
    families: tuple[str, ...] = ()
    workers: int = 1  # 0 runs cases in this process (no crash isolation; for benchmarks and tests)
    max_cases: int | None = None
    case_timeout: float = 300.0
    known: KnownIssues = field(default_factory=KnownIssues)
    progress: bool | None = None  # None: live display only on a terminal
    database: Path | str | None = None  # Hypothesis example database (a directory or a redis:// URL): findings'
    # choices saved, replayed first
    db_expire_days: float = 30.0  # --db-expire: a Redis entry unused this long expires
    shard: tuple[int, int] = (1, 1)  # --shard I/N: this run draws every N-th seed of the stream, from the (I-1)-th
    ray: str | None = None  # --ray [ADDRESS]: workers are Ray actors on a cluster ("" starts a local one)
    coverage: CoverageSpec | None = None  # --coverage: line coverage of Dynamo per worker, OUT/coverage.json
    guided: bool = False  # --guided (needs coverage): fragment bandit and a pool of choice sequences
    swarm: bool = False  # --swarm: a subset of the grammar per window of seeds, explained constructs down-weighted
    resume: ResumeState | None = None  # --resume DIR: continue the campaign saved there (campaign/resume.py)
    worker_memory: int | None = None  # --worker-memory: RLIMIT_AS per worker process in bytes (None: no limit)
    minimize_budget: float | None = None  # --minimize-budget: seconds per new cheap key in the triage worker
    triage_grace: float | None = None  # the most the triage queue may delay the end (None: `triage_grace()`)
    flags: dict[str, Any] = field(default_factory=dict)  # the command-line flags `--resume` takes over (journaled)
