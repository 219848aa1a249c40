"""Filing findings into root-cause buckets on disk: `OUT/findings/<slug>-<id>/`.

Each bucket folder holds `repro.py` (the minimized repro; the first example while unminimized), `report.md`
(a PyTorch pt2 issue) and `examples/` (up to `MAX_EXAMPLES` original programs, one per finding identity, plus
`count.txt`). `BucketFiler` owns the folders and nothing else: the campaign ledger decides what to file and
counts (see `dynfuzz.campaign.ledger` for the flow), and the campaign runs the triage processes.

A bucket's members are the ledger's `Unique` rows, one per finding identity (signature and cheap key). Only
an identity whose own triage has come back moves to the bucket of its explained key (`place`), so a
merge or a known issue never carries along an identity that was not triaged itself.

Note [A run only changes folders it created]
Folder names derive from keys, and two keys never share one (the id is a hash of the key); a name is still
checked before a folder is created or renamed, and an example file is never written over: `_free` appends a
counter instead. Together with `fuzz` refusing an `--out` that holds an earlier campaign, nothing a person
kept from an earlier run is overwritten or deleted.
"""
from __future__ import annotations

import shutil
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from dynfuzz.generators.case import Case
from dynfuzz.oracles import Finding
from dynfuzz.run.compilers import CompileSpec
from dynfuzz.run.multi_backend import spec_for
from dynfuzz.triage.buckets import bucket_id, folder_name, is_bug, tier_of, tier_rank
from dynfuzz.triage.explain import Explanation
from dynfuzz.triage.known import KnownIssues
from dynfuzz.triage.program_form import program_form

MAX_EXAMPLES = 5
# unminimized: waiting for (or never reached by) triage; ok: minimized, explained, its repro reproduces;
# flaky: three runs in fresh processes did not reproduce it; unverified: minimized, but the repro script itself
# failed to run (it is kept, never counted as ok); unexplained: minimized, but nothing names its cause (the
# key would only say "tensor ops" and localization named no function).
STATUSES = ("unminimized", "ok", "flaky", "unverified", "unexplained")


@dataclass
class Bucket:
    """One root cause seen by a campaign: its key, where it lives, what fell into it."""

    key: str
    explanation: Explanation
    first_seen: float
    folder: Path
    members: list[Any] = field(default_factory=list)  # the ledger's `Unique` rows filed here
    status: str = "unminimized"
    verdict: str | None = None  # the repro's verdict once triage ran it
    note: str = ""
    triage_seconds: float = 0.0  # the sum of its triage jobs' wall time
    phases: dict[str, Any] = field(default_factory=dict)  # the last job's seconds and judge calls by phase
    suspects: list[dict[str, Any]] = field(default_factory=list)  # localization: where to look in torch
    extra: dict[str, Any] = field(default_factory=dict)  # row fields other tools added (`releases`, ...)
    explained: Explanation | None = None  # its triage's explanation (the key stays cheap while unexplained)

    @property
    def id(self) -> str:
        return bucket_id(self.key)

    @property
    def count(self) -> int:
        return sum(u.count for u in self.members)

    @property
    def is_bug(self) -> bool:
        """Counted in `bugs` and failing the gate (Note [Tiers: what counts as a bug])."""
        return is_bug(self.explanation.cls, self.status, bool(self.extra.get("fixed_in")))

    @property
    def tier(self) -> str:
        return tier_of(self.explanation.cls)

    def summary(self) -> dict[str, Any]:
        repro = self.folder / "repro.py"
        return {**self.extra,
                "id": self.id, "key": self.key, "cause": self.explanation.cause, "oracle": self.explanation.oracle,
                "class": self.explanation.cls, "tier": self.tier, "count": self.count,
                "first_seen_seconds": round(self.first_seen, 3), "layer": self.explanation.layer,
                "repro": str(repro) if repro.exists() else None, "status": self.status, "verdict": self.verdict,
                "folder": str(self.folder), "signatures": sorted({u.finding.signature for u in self.members}),
                "examples": sum(1 for u in self.members if u.path is not None), "note": self.note,
                "triage_seconds": round(self.triage_seconds, 3), "phases": self.phases,
                "suspects": self.suspects, "explanation": _explanation_row(self.explanation)}


def _explanation_row(e: Explanation) -> dict[str, Any]:
    row = asdict(e)
    row["constructs"], row["responsible"] = list(e.constructs), list(e.responsible)
    return row


def explanation_from_row(row: dict[str, Any]) -> Explanation:
    """The inverse of the `explanation` field of a bucket row (for `dynfuzz triage` and `--resume`)."""
    data = dict(row)
    data["constructs"], data["responsible"] = tuple(data.get("constructs", ())), tuple(data.get("responsible", ()))
    return Explanation(**data)


def _free(path: Path) -> Path:
    """`path`, or `path` with a counter before its suffix when something is already there."""
    n, candidate = 1, path
    while candidate.exists():
        n += 1
        candidate = path.with_name(f"{path.stem}-{n}{path.suffix}")
    return candidate


class BucketFiler:
    """Bucket folders: create, add members and examples, re-key and merge on triage results, drop known ones."""

    def __init__(self, findings_dir: Path, spec: CompileSpec, known: KnownIssues, torch: str) -> None:
        self.dir, self.spec, self.known, self.torch = findings_dir, spec, known, torch
        self.buckets: dict[str, Bucket] = {}
        self.forms: dict[str, Bucket] = {}  # a minimized program's form -> the bucket it was filed in

    def twin(self, t: Any) -> Bucket | None:
        """The bucket a triage result's minimized program was filed in already, up to the names it binds
        (triage/program_form.py): an unexplained finding joins it instead of opening a bucket under its own
        surface's cheap key."""
        form = program_form(t.case, t.finding) if t.minimized else None
        bucket = self.forms.get(form) if form is not None else None
        return bucket if bucket is not None and self.buckets.get(bucket.key) is bucket else None

    # ---- filing ----
    def known_key(self, key: str) -> bool:
        return self.known.match(key, self.torch) is not None

    def file(self, case: Case, f: Finding, u: Any, seconds: float, explanation: Explanation,
             triaged: Any = None) -> Bucket:
        """File `u` (one identity) under `explanation.key`: into the bucket of that key, or a new one (written
        from `triaged`, a triage result, when there is one: its minimized repro)."""
        key = explanation.key
        bucket = self.buckets.get(key)
        if bucket is None:
            bucket = Bucket(key, explanation, seconds, _free(self.dir / folder_name(key)))
            self.buckets[key] = bucket
            if triaged is not None:
                self._write_minimized(bucket, triaged)
            else:
                self._write_first(bucket, case, f)
        u.bucket = key
        bucket.members.append(u)
        if sum(1 for m in bucket.members if m.path is not None) < MAX_EXAMPLES:
            u.path = self._write_example(bucket, case, f, u)
        self._write_count(bucket)
        return bucket

    def count(self, u: Any) -> None:
        bucket = self.buckets.get(u.bucket)
        if bucket is not None:
            self._write_count(bucket)

    def _write_example(self, bucket: Bucket, case: Case, f: Finding, u: Any) -> Path:
        from dynfuzz.triage.repro import write_finding

        name = f"{f.signature}-{bucket_id(u.cheap_key or '')[:8]}"  # one file per identity (signature, cheap key)
        return write_finding(bucket.folder / "examples", case, f, spec_for(self.spec, f.layer), bucket=bucket.key,
                             name=name)

    def _write_first(self, bucket: Bucket, case: Case, f: Finding) -> None:
        from dynfuzz.triage.repro import metadata_for, render_report, render_repro
        from dynfuzz.triage.repro_meta import write_repro

        bucket.folder.mkdir(parents=True, exist_ok=True)
        spec = spec_for(self.spec, f.layer)  # the backend the finding first showed on, with --backends
        meta = metadata_for(case, f, spec, bucket=bucket.key, cause=bucket.explanation.cause)
        text = render_repro(case, f, spec, meta)
        write_repro(bucket.folder / "repro.py", text)
        (bucket.folder / "report.md").write_text(render_report(case, f, spec, meta, text, bucket.tier,
                                                               bucket.explanation.layer))

    def _write_count(self, bucket: Bucket) -> None:
        kept = sum(1 for m in bucket.members if m.path is not None)
        (bucket.folder / "examples").mkdir(parents=True, exist_ok=True)
        (bucket.folder / "examples" / "count.txt").write_text(
            f"{bucket.count} finding(s) in this bucket ({len(bucket.members)} identities); {kept} example(s) kept\n")

    # ---- triage results ----
    def remove(self, u: Any) -> None:
        """Take `u` out of its bucket (its triage named a known issue, or another bucket): its example goes, and
        a bucket left empty is deleted (it was created by this run for `u`)."""
        bucket = self.buckets.get(u.bucket)
        if bucket is None:
            return
        bucket.members = [m for m in bucket.members if m is not u]
        if u.path is not None:
            u.path.unlink(missing_ok=True)
            u.path.with_name(u.path.stem + ".torch.log").unlink(missing_ok=True)
            u.path = None
        if bucket.members:
            self._write_count(bucket)
        else:
            del self.buckets[bucket.key]
            shutil.rmtree(bucket.folder, ignore_errors=True)

    def place(self, u: Any, case: Case, f: Finding, t: Any, seconds: float, explanation: Explanation) -> Bucket:
        """Move `u` to the bucket of `explanation.key` (its explained key, or its cheap key while unexplained; `t`:
        its triage result). Alone in its old bucket, the folder is renamed (keeping its examples); else its example
        moves."""
        key, old = explanation.key, self.buckets.get(u.bucket)
        if old is not None and old.key == key:
            target = old
        elif old is not None and old.members == [u] and key not in self.buckets:
            del self.buckets[old.key]
            target = old
            target.key, target.explanation = key, explanation
            new_folder = _free(self.dir / folder_name(key))
            old.folder.rename(new_folder)
            target.folder = new_folder
            if u.path is not None:
                u.path = new_folder / "examples" / u.path.name
            u.bucket = key
            self.buckets[key] = target
            target.status = "unminimized"
        else:
            if old is not None:
                self.remove(u)
            seen = getattr(u, "seen", None)  # a bucket triage opens was first seen when its finding was
            target = self.file(case, f, u, seconds if seen is None else min(seen, seconds), explanation, triaged=t)
        self._record_triage(target, t, seconds)
        return target

    def _record_triage(self, bucket: Bucket, t: Any, seconds: float) -> None:
        form = program_form(t.case, t.finding) if t.minimized and t.verdict == "reproduces" else None
        held = self.forms.get(form) if form is not None else None
        if form is not None and (held is None or self.buckets.get(held.key) is not held):
            self.forms[form] = bucket
        bucket.triage_seconds += t.seconds
        bucket.phases = t.phases
        bucket.explained = bucket.explained or t.explanation
        # its first triaged identity writes its repro; one that reproduces replaces a flaky or broken one (a
        # bucket's status is its members' own verdicts, never inherited from one member that did not reproduce)
        if bucket.status in ("unminimized", "unverified") or bucket.status == "flaky" and t.verdict == "reproduces":
            self._write_minimized(bucket, t)
        if bucket.verdict == "reproduces":  # campaign seconds when it first had a minimized repro that reproduces
            bucket.extra.setdefault("minimized_seconds", round(seconds, 3))
        self._write_count(bucket)

    def mark(self, u: Any, status: str, note: str, verdict: str | None = None) -> None:
        """A triage that did not minimize `u`: its bucket keeps its key, and takes this status and note only when
        every member's own triage says so (a member not triaged yet, or one that reproduced, is not flaky)."""
        bucket = self.buckets.get(u.bucket)
        if bucket is not None and bucket.status == "unminimized" \
                and all(getattr(m, "verdict", status) == status for m in bucket.members):
            bucket.status, bucket.note = status, note
            bucket.verdict = verdict or bucket.verdict

    def localized(self, bucket: Bucket, loc: Any) -> Bucket:
        """A localization came back: its suspects go into report.md ("where to look"); its locus, when there is
        one, enters the key (merging into a bucket of that key, else renaming the folder). Returns the bucket
        the members are in now."""
        from dataclasses import replace

        bucket.suspects = loc.suspects
        bucket.triage_seconds += loc.seconds
        self._write_where_to_look(bucket)
        base = bucket.explained or bucket.explanation
        if not loc.locus or base.locus == loc.locus or not base.ablated:
            return bucket
        explanation = replace(base, locus=loc.locus)
        key = explanation.key
        if key == bucket.key:  # the locus is not part of an identity key (Note [A key names what Dynamo did])
            bucket.explanation = explanation
            return bucket
        del self.buckets[bucket.key]
        target = self.buckets.get(key)
        if target is None:
            new_folder = _free(self.dir / folder_name(key))
            bucket.folder.rename(new_folder)
            for u in bucket.members:
                u.bucket = key
                if u.path is not None:
                    u.path = new_folder / "examples" / u.path.name
            bucket.key, bucket.explanation, bucket.folder = key, explanation, new_folder
            if bucket.status == "unexplained":
                bucket.status = "ok"
            self.buckets[key] = bucket
            return bucket
        for u in bucket.members:
            u.bucket = key
            if u.path is not None and sum(1 for m in target.members if m.path is not None) < MAX_EXAMPLES:
                moved = _free(target.folder / "examples" / u.path.name)
                shutil.move(str(u.path), moved)
                u.path = moved
            elif u.path is not None:
                u.path.unlink(missing_ok=True)
                u.path = None
            target.members.append(u)
        target.first_seen = min(target.first_seen, bucket.first_seen)
        shutil.rmtree(bucket.folder, ignore_errors=True)
        self._write_count(target)
        return target

    def drop(self, bucket: Bucket) -> None:
        """Delete a bucket this run created (its key turned out to be a known issue)."""
        self.buckets.pop(bucket.key, None)
        shutil.rmtree(bucket.folder, ignore_errors=True)

    def _write_where_to_look(self, bucket: Bucket) -> None:
        """The localization's suspects in report.md, only when one leads: a table of functions tied at one score
        (one failing run against a few passing ones: torch's compile wrappers first) only misleads a triager.
        summary.json keeps them either way."""
        report = bucket.folder / "report.md"
        if not bucket.suspects or not report.exists():
            return
        text = report.read_text().split("\n### Where to look", 1)[0].rstrip() + "\n"
        top = bucket.suspects[0]
        tied = [s for s in bucket.suspects if s["score"] >= top["score"]]
        if len(tied) > 1:
            report.write_text(text + "\n### Where to look\n\nSpectrum-based fault localization found no leading "
                              f"function of torch: {len(tied)} or more tie at score {top['score']:.3f} "
                              f"({top['failing']} failing run, {top['passing']} passing), so none is named here.\n")
            return
        rows = "\n".join(f"| `{s['function']}` | {s['score']:.3f} | {s['failing']} | {s['passing']} | "
                         f"{', '.join(map(str, s['lines'][:8]))} |" for s in bucket.suspects)
        report.write_text(text + "\n### Where to look\n\nFunctions of torch ranked by spectrum-based fault "
                          "localization (Ochiai over the minimized program and its passing one-edit neighbours, each "
                          "run in a fresh process):\n\n| function | score | failing runs | passing runs | lines |\n"
                          "|---|---|---|---|---|\n" + rows + "\n")

    def _write_minimized(self, bucket: Bucket, t: Any) -> None:
        from dynfuzz.triage.repro import metadata_for, render_report
        from dynfuzz.triage.repro_meta import split, write_repro

        bucket.folder.mkdir(parents=True, exist_ok=True)
        bucket.verdict = t.verdict
        if t.verdict == "reproduces":
            bucket.status = "unexplained" if t.explanation.unexplained else "ok"
        elif t.verdict == "flaky":
            bucket.status = "flaky"
            bucket.note = "its repro did not reproduce in three runs in fresh processes"
        else:
            bucket.status = "unverified"
            bucket.note = "the minimized repro did not run cleanly (the script itself failed); see repro.py"
        spec = spec_for(self.spec, bucket.explanation.layer)
        meta = {**(split(t.repro)[1] or metadata_for(t.case, t.finding, spec)), "bucket": bucket.key,
                "cause": bucket.explanation.cause}
        write_repro(bucket.folder / "repro.py", t.repro, meta)
        (bucket.folder / "report.md").write_text(render_report(t.case, t.finding, spec, meta, t.repro, bucket.tier,
                                                               bucket.explanation.layer))

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
        return sum(b.count for b in self.buckets.values() if b.explanation.cls == "internal-error")
