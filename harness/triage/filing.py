"""Filing findings into root-cause buckets on disk: `OUT/findings/<slug>-<id>/`.

Each bucket folder holds `repro.py` (the minimized repro; the first example while unminimized),
`report.md` (a PyTorch pt2 issue) and `examples/` (up to `MAX_EXAMPLES` original programs, one per
signature, plus `count.txt`). `BucketFiler` owns the folders and the minimization queue; the campaign
ledger owns the counting. See the module docstring of `dynfuzz.run.ledger` for the flow.
"""
from __future__ import annotations

import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dynfuzz.generators.case import Case
from dynfuzz.oracles import Finding
from dynfuzz.run.compilers import CompileSpec
from dynfuzz.run.multi_backend import spec_for
from dynfuzz.triage.buckets import INTERNAL_CLASSES, NOTE_CLASSES, bucket_id, folder_name, is_bug, tier_of, tier_rank
from dynfuzz.triage.explain import Explanation, cheap_explanation
from dynfuzz.triage.known import KnownIssues

MAX_EXAMPLES = 5
PROBE = "probe "  # the queue ident of a suspect's triage is PROBE + its cheap key
STATUSES = ("unminimized", "ok", "flaky")


@dataclass
class Bucket:
    """One root cause seen by a campaign: its key, where it lives, what fell into it."""

    key: str
    explanation: Explanation
    first_seen: float
    folder: Path
    count: int = 0
    members: list[Any] = field(default_factory=list)  # the ledger's `Unique` rows filed here
    status: str = "unminimized"
    verdict: str | None = None  # the repro's verdict when it was run once after writing
    note: str = ""

    @property
    def id(self) -> str:
        return bucket_id(self.key)

    @property
    def is_bug(self) -> bool:
        """Counted in `bugs` and failing the gate (Note [Tiers: what counts as a bug])."""
        return is_bug(self.explanation.cls, self.status)

    @property
    def tier(self) -> str:
        return tier_of(self.explanation.cls)

    def summary(self) -> dict[str, Any]:
        repro = self.folder / "repro.py"
        return {"id": self.id, "key": self.key, "cause": self.explanation.cause, "oracle": self.explanation.oracle,
                "class": self.explanation.cls, "tier": self.tier, "count": self.count,
                "first_seen_seconds": round(self.first_seen, 3),
                "layer": self.explanation.layer,
                "repro": str(repro) if repro.exists() else None, "status": self.status, "verdict": self.verdict,
                "folder": str(self.folder), "signatures": [u.finding.signature for u in self.members],
                "examples": sum(1 for u in self.members if u.path is not None), "note": self.note}


class BucketFiler:
    """Files findings under their keys, runs the minimization queue, re-keys buckets it explains."""

    def __init__(self, findings_dir: Path, spec: CompileSpec, known: KnownIssues, torch: str) -> None:
        self.dir, self.spec, self.known, self.torch = findings_dir, spec, known, torch
        self.buckets: dict[str, Bucket] = {}
        self.explained: dict[str, str] = {}  # cheap key -> explained key
        self.pending: dict[str, Bucket] = {}  # cheap key -> the bucket waiting for its triage
        self.probing: set[str] = set()  # cheap keys of suspects (run.ledger) waiting for their triage
        self.resolved: list[str] = []  # cheap keys of suspects whose triage has ended, for the ledger to re-file
        self.triaged: dict[str, Any] = {}  # cheap key -> a suspect's triage, written when its bucket is new
        self.queue = None

    def enable_queue(self, budget: float, lanes: int = 1) -> None:
        """Minimize new cheap keys in `lanes` worker processes, `budget` seconds each."""
        from dynfuzz.triage.queue import TriagePool

        self.queue = TriagePool(self.spec, budget, lanes, log_dir=self.dir.parent / "workers")

    # ---- filing ----
    def file(self, case: Case, f: Finding, u: Any, seconds: float, cheap: Explanation | None = None) -> bool:
        """File a new finding (`cheap`: its cheap explanation, when the caller has it); False when its key is
        a known issue (then nothing is written)."""
        cheap = cheap or cheap_explanation(case, f)
        key = self.explained.get(cheap.key, cheap.key)
        u.bucket = key
        if self.known.match(key, self.torch) is not None:
            return False
        bucket = self.buckets.get(key)
        if bucket is None:
            bucket = Bucket(key, cheap, seconds, self.dir / folder_name(key))
            self.buckets[key] = bucket
            self._write_first(bucket, case, f)
            triaged = self.triaged.pop(cheap.key, None)
            if triaged is not None and triaged.explanation.key == key:
                bucket.explanation = triaged.explanation
                self._write_minimized(bucket, triaged)
        bucket.members.append(u)
        bucket.count += 1
        if sum(1 for m in bucket.members if m.path is not None) < MAX_EXAMPLES:
            u.path = self._write_example(bucket, case, f)
        self._write_count(bucket)
        queueable = bucket.explanation.cls not in INTERNAL_CLASSES | NOTE_CLASSES and f.oracle != "harness"
        if self.queue is not None and queueable and key == cheap.key and cheap.key not in self.pending \
                and cheap.key not in self.explained:
            self.pending[cheap.key] = bucket
            self.queue.submit(cheap.key, case, f, {"bucket_cheap": cheap.key})
        return True

    def routed(self, cheap: Explanation) -> bool:
        """Whether a finding with this cheap key goes where it belongs without a triage of its own: its key
        has been explained already, or a bucket is filed (or waiting) under it."""
        return cheap.key in self.explained or cheap.key in self.buckets or cheap.key in self.pending

    def probe(self, case: Case, f: Finding, cheap: Explanation) -> bool:
        """Triage a suspect on the side: a finding whose signature is filed under another cheap key. True when
        it is queued (or its cheap key already is); its result comes back through `resolved`."""
        if cheap.key in self.probing:
            return True
        if self.queue is None or f.oracle == "harness" or cheap.cls in INTERNAL_CLASSES | NOTE_CLASSES:
            return False
        self.probing.add(cheap.key)
        self.queue.submit(PROBE + cheap.key, case, f, {"bucket_cheap": cheap.key})
        return True

    def count(self, u: Any) -> None:
        bucket = self.buckets.get(u.bucket)
        if bucket is not None:
            bucket.count += 1
            self._write_count(bucket)

    def _write_example(self, bucket: Bucket, case: Case, f: Finding) -> Path:
        from dynfuzz.triage.repro import write_finding

        return write_finding(bucket.folder / "examples", case, f, spec_for(self.spec, f.layer), bucket=bucket.key)

    def _write_first(self, bucket: Bucket, case: Case, f: Finding) -> None:
        from dynfuzz.triage.repro import metadata_for, render_report, render_repro

        bucket.folder.mkdir(parents=True, exist_ok=True)
        spec = spec_for(self.spec, f.layer)  # the backend the finding first showed on, with --backends
        meta = metadata_for(case, f, spec, bucket=bucket.key, cause=bucket.explanation.cause)
        text = render_repro(case, f, spec, meta)
        (bucket.folder / "repro.py").write_text(text)
        (bucket.folder / "report.md").write_text(render_report(case, f, spec, meta, text))

    def _write_count(self, bucket: Bucket) -> None:
        kept = sum(1 for m in bucket.members if m.path is not None)
        (bucket.folder / "examples").mkdir(parents=True, exist_ok=True)
        (bucket.folder / "examples" / "count.txt").write_text(
            f"{bucket.count} finding(s) in this bucket ({len(bucket.members)} signature(s)); {kept} example(s) kept\n")

    # ---- results of the queue ----
    def poll(self) -> list[str]:
        """Apply finished triage jobs; returns the keys of buckets dropped as known issues."""
        if self.queue is None:
            return []
        return [k for ident, status, payload in self.queue.poll() for k in self.apply(ident, status, payload)]

    def drain(self, grace: float) -> list[str]:
        """Wait up to `grace` s for the queue, then stop it; unfinished buckets stay `unminimized`."""
        if self.queue is None:
            return []
        results, left = self.queue.drain(time.monotonic() + grace)
        dropped = [k for ident, status, payload in results for k in self.apply(ident, status, payload)]
        self.probing.clear()
        for ident in left:
            bucket = self.pending.pop(ident, None)
            if bucket is not None:
                bucket.note = "not minimized before the end of the campaign"
        return dropped

    def apply(self, ident: str, status: str, payload: Any) -> list[str]:
        """Re-key the bucket waiting on `ident` with its explained key (merge, known, or rename)."""
        if ident.startswith(PROBE):
            self._resolve(ident[len(PROBE):], status, payload)
            return []
        bucket = self.pending.pop(ident, None)
        if bucket is None or bucket.key not in self.buckets:
            return []
        if status != "done":
            bucket.note = f"minimization failed: {payload}"
            return []
        t = payload
        if not t.minimized:
            bucket.status, bucket.verdict, bucket.note = "flaky", t.verdict, "did not diverge again when re-run"
            return []
        final = t.explanation.key
        self.explained[ident] = final
        old = bucket.key
        del self.buckets[old]
        if self.known.match(final, self.torch) is not None:
            shutil.rmtree(bucket.folder, ignore_errors=True)
            for u in bucket.members:
                u.bucket = final
            return [final]
        target = self.buckets.get(final)
        if target is None:
            target = bucket
            target.key, target.explanation = final, t.explanation
            for u in bucket.members:
                u.bucket = final
            new_folder = self.dir / folder_name(final)
            if new_folder != bucket.folder:
                shutil.rmtree(new_folder, ignore_errors=True)
                bucket.folder.rename(new_folder)
                for u in bucket.members:
                    if u.path is not None:
                        u.path = new_folder / "examples" / u.path.name
                target.folder = new_folder
        else:
            self._merge(bucket, target)
        self.buckets[final] = target
        if target.status == "unminimized":
            self._write_minimized(target, t)
        self._write_count(target)
        return []

    def _resolve(self, cheap_key: str, status: str, payload: Any) -> None:
        """A suspect's triage ended: its explained key routes it from now on (it stays with the finding it
        was counted with when the triage failed or the case did not diverge again)."""
        self.probing.discard(cheap_key)
        if status == "done" and payload.minimized:
            self.explained[cheap_key] = payload.explanation.key
            self.triaged[cheap_key] = payload
            self.resolved.append(cheap_key)

    def _merge(self, source: Bucket, target: Bucket) -> None:
        for u in source.members:
            u.bucket = target.key
            kept = sum(1 for m in target.members if m.path is not None)
            if u.path is not None and kept < MAX_EXAMPLES:
                moved = target.folder / "examples" / u.path.name
                shutil.move(str(u.path), moved)
                u.path = moved
            else:
                u.path = None
            target.members.append(u)
        target.count += source.count
        target.first_seen = min(target.first_seen, source.first_seen)
        shutil.rmtree(source.folder, ignore_errors=True)

    def _write_minimized(self, bucket: Bucket, t: Any) -> None:
        from dynfuzz.triage.repro import metadata_for, render_report

        bucket.status = "flaky" if t.verdict == "flaky" else "ok"
        bucket.verdict = t.verdict
        (bucket.folder / "repro.py").write_text(t.repro)
        spec = spec_for(self.spec, bucket.explanation.layer)
        meta = metadata_for(t.case, t.finding, spec, bucket=bucket.key, cause=bucket.explanation.cause)
        (bucket.folder / "report.md").write_text(render_report(t.case, t.finding, spec, meta, t.repro))

    # ---- reading ----
    def rows(self) -> list[Bucket]:
        """Bugs first, miscompiles before crashes (then refusals, performance, dynfuzz's own); most seen first."""
        return sorted(self.buckets.values(),
                      key=lambda b: (not b.is_bug, tier_rank(b.explanation.cls), -b.count, b.key))

    def bugs(self) -> int:
        return sum(1 for b in self.buckets.values() if b.is_bug)

    def in_tier(self, tier: str) -> int:
        """Buckets of one tier that are not flaky (`refusals`, `performance` in summary.json)."""
        return sum(1 for b in self.buckets.values() if b.tier == tier and b.status != "flaky")

    def internal(self) -> int:
        return sum(b.count for b in self.buckets.values() if b.explanation.cls in INTERNAL_CLASSES)

    def queued(self) -> int:
        return len(self.queue) if self.queue is not None else 0
