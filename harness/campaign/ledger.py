"""The campaign's ledger: what a campaign counts, and the decision where each finding is filed.

Kept apart from the loop in `campaign.py` (which schedules cases onto workers or a cluster, and runs the
triage lanes) so that what is counted and filed, and how, lives in one place whatever ran the cases; `dynfuzz
triage DIR` (campaign/finish.py) rebuilds a ledger from a campaign folder and applies the same rules.

Filing (docs/findings.md, "Root-cause buckets"): every finding gets a cheap key (the bucket key computed on
the unminimized program, no judge call). A finding is new when its identity, its signature together with its
cheap key, is: a signature alone ("out[0] values differ") is shared by unrelated bugs. A new identity is
- **filed at once** in a bucket of its cheap key when that cheap key and its signature are seen for the first
  time, and handed to triage first (priority `NEW`): the bucket is re-keyed when triage explains it;
- a **suspect** when its signature or its cheap key is filed already: most are the same bug reached through
  other program text, some are a second bug. It waits for its own triage (priority `SUSPECT`), then goes where
  its explained key says: into that bucket, a new one, or a known issue. A suspect is never counted with
  another finding, and never as known, before its own triage names it.
Every identity waiting for triage is also on disk (Note [Nothing waits only in memory], triage/pending.py):
at the end, suspects still waiting are filed under their cheap keys, `unminimized`, for `dynfuzz triage`.
Without triage (`--no-minimize`) every new identity is filed under its cheap key at once.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dynfuzz.campaign import ledger_summary
from dynfuzz.campaign.crash_join import JOINED, CrashJoins, crash_identity
from dynfuzz.campaign.journal import encode
from dynfuzz.generators.case import Case
from dynfuzz.oracles import Finding, finding
from dynfuzz.run.harness_errors import HarnessError, HarnessErrorLog
from dynfuzz.run.multi_backend import spec_for
from dynfuzz.triage.explain import Explanation, cheap_explanation, filed
from dynfuzz.triage.filing import BucketFiler
from dynfuzz.triage.localize import wants_localization
from dynfuzz.triage.pending import LOCALIZE, NEW, NEW_KEY, SUSPECT, Job, PendingJobs, identity
from dynfuzz.triage.repro import metadata_for, render_repro, torch_version

if TYPE_CHECKING:
    from dynfuzz.campaign.campaign import CampaignConfig


@dataclass
class Unique:
    finding: Finding
    path: Path | None  # the example file, inside its bucket's examples/ (None when not kept: over 5)
    seed: int | None
    count: int = 1
    bucket: str | None = None  # the key of the bucket it is filed in
    cheap_key: str | None = None  # the bucket key of the program as it was found (before minimization)
    case: Case | None = None  # the program, kept while its triage is pending
    verdict: str | None = None  # its own triage's outcome (`reproduces`, `flaky`, ...); None: not triaged yet
    seen: float | None = None  # seconds into the campaign when it was found (a bucket it opens was first seen then)


def _encode_payload(payload: Any) -> str:
    """A triage result for the journal; one that does not pickle is kept as its text (a failed job's reason)."""
    try:
        return encode(payload)
    except Exception:  # noqa: BLE001  (anything a worker sent back: its text still says why the job failed)
        return encode(str(payload))


class Ledger:
    """Everything a campaign counts and files; the campaign feeds it finished cases through `_finish`, and
    triage results through `apply_triage`."""

    def __init__(self, config: CampaignConfig) -> None:
        self.config = config
        self.findings_dir = config.out / "findings"
        self.unique: dict[str, Unique] = {}
        self.suspects: dict[str, Unique] = {}  # identity -> a finding waiting for its own triage, not yet filed
        self.known_hits: Counter[str] = Counter()
        self.known_by_identity: dict[str, str] = {}  # identity() of findings keyed as known issues -> key
        self.first_of_signature: dict[str, str] = {}  # signature -> identity of its first finding filed or known
        self.cheap_keys_seen: set[str] = set()  # cheap keys filed so far (their buckets may have been re-keyed)
        self.suspect_keys: set[str] = set()  # cheap keys of the suspects queued so far
        self.triaged_keys: set[str] = set()  # cheap keys of the findings triage minimized (filed, moved or known)
        self.features: Counter[str] = Counter()
        self.by_oracle: Counter[str] = Counter()
        self.by_kind: Counter[str] = Counter()
        self.by_layer: Counter[str] = Counter()  # first diverging layer (with --backends / --cross-device)
        self.cases = 0
        self.findings = 0
        self.eager_errors = 0
        self.crashes = 0
        self.hangs = 0
        self.torch_seconds = 0.0
        self.timing_sums: Counter[str] = Counter()
        self.reference: Counter[str] = Counter()
        self.unsupported_constructs: Counter[str] = Counter()
        self.skipped: Counter[str] = Counter()  # cases not judged, by reason (a deliberate refusal)
        self.seconds = 0.0
        self.harness_errors = HarnessErrorLog(config.out / "harness-errors")
        self.filer = BucketFiler(self.findings_dir, config.spec, config.known, torch_version())
        self.pending = PendingJobs(config.out / "queue")
        self.triage: Any = None  # where triage jobs go (the campaign's TriagePool); None: no triage
        self.localized: set[str] = set()  # bucket keys whose localization was queued
        self.on_new_finding: Any = None  # called with the case of every newly filed identity (example database)
        self.journal: Any = None  # the campaign's Journal (campaign/journal.py); None while a journal is replayed
        self.journaled: set[str] = set()  # identities whose program the journal holds already
        self.known_verdicts: dict[str, bool] = {}  # key -> whether it is a known issue (asked once, journaled)
        # (identity, case seed) of findings journaled after the last `progress` fact: their cases run again on
        # --resume (the stream position is the progress fact's), and find them again without counting them twice
        self.unconfirmed: Counter[tuple[str, int]] = Counter()
        self.crash_joins = CrashJoins()  # Note [A crash's identity is cheap] (campaign/crash_join.py)

    # ---- bookkeeping ----
    def _finish(self, case: Case, status: str, payload: Any) -> None:
        self.cases += 1
        self.features.update(case.tags)
        if status in ("harness-error", "error"):  # dynfuzz could not judge it: filed apart, never a finding
            self.harness_error(case, HarnessError.from_payload(payload))
            return
        if status == "done":
            result = payload
            self.torch_seconds += result.torch_seconds
            for k, v in result.timings.items():
                self.timing_sums[k] += v
            if not result.eager_ok:
                self.eager_errors += 1
            if getattr(result, "skipped", None):
                self.skipped[result.skipped] += 1
            status = result.reference.get("status")
            if status and status != "off":
                self.reference[status] += 1
                if status != "traced":
                    self.unsupported_constructs[str(result.reference.get("construct"))] += 1
            new = []
            for f in result.findings:
                if f.oracle == "harness" and f.kind == "oracle-error":
                    self.harness_error(case, HarnessError("oracle", f.message, "\n".join(f.details)))
                else:
                    new += self.record(case, f)
            if getattr(result, "torch_log", "") and new:
                self._attach_torch_log(new, result.torch_log)
            return
        if status == "crash":
            self.crashes += 1
            crash = payload if isinstance(payload, dict) else {"exitcode": payload}  # + the worker's log tail
            code = crash.get("exitcode")
            f = finding("harness", "crash", f"the worker process died (exit code {code}) running this case",
                        f"worker exit {code}", details=(f"exit code {code}", *filter(None, [crash.get("log")])))
        elif status == "hang":
            self.hangs += 1
            f = finding("harness", "hang", f"the case ran longer than {payload:.0f} s", "timeout")
        else:
            f = finding("harness", "harness-error", f"the harness failed on this case: {payload}", str(payload),
                        severity="info")
        self.record(case, f)

    def record(self, case: Case, f: Finding) -> list[Unique]:
        """Count a finding; file it once per identity (or queue it as a suspect) unless it is a known issue.
        Returns the identity it made new, if any (its example is written, or its job is queued)."""
        cheap = cheap_explanation(case, f)
        ident = identity(f.signature, cheap.key)
        if case.seed is not None and self.unconfirmed.get((ident, case.seed)):
            self.unconfirmed[(ident, case.seed)] -= 1  # a re-run case's finding: journaled and counted already
            return []
        self.findings += 1
        self.by_oracle[f.oracle] += 1
        self.by_kind[f.kind] += 1
        if f.layer:
            self.by_layer[f.layer] += 1
        self._journal_finding(ident, case, f, cheap.key)
        if ident in self.known_by_identity:  # its own key (or its own triage) named a known issue
            self.known_hits[self.known_by_identity[ident]] += 1
            return []
        u = self.unique.get(ident) or self.suspects.get(ident)
        if u is not None:
            u.count += 1
            self.filer.count(u)
            return []
        u = Unique(f, None, case.seed, cheap_key=cheap.key, case=case, seen=self.seconds)
        triage = self.triage is not None and f.oracle != "harness" and cheap.cls not in ("internal-error",
                                                                                         "reference-disagreement")
        if triage and self._join_crash(case, u, ident, cheap):
            return [u]
        crash = crash_identity(cheap) if triage else None
        if triage and (f.signature in self.first_of_signature or cheap.key in self.cheap_keys_seen
                       or crash in self.crash_joins.leaders):
            self.suspects[ident] = u
            new_key = cheap.key not in self.cheap_keys_seen and crash not in self.crash_joins.leaders \
                and cheap.key not in self.suspect_keys
            self.suspect_keys.add(cheap.key)
            self._queue(ident, case, f, SUSPECT, cheap.key, crash, new_key)
            return [u]
        if not self._file(case, u, ident, cheap):
            return []
        if triage:
            self._queue(ident, case, f, NEW, cheap.key, crash)
        else:
            u.case = None
        return [u]

    def _join_crash(self, case: Case, u: Unique, ident: str, cheap: Explanation, count: int = 1) -> bool:
        """File a crash whose identity triage already bound (Note [A crash's identity is cheap]): into its `ok`
        bucket, or counted as its known issue; False when it must wait for its own triage."""
        crash = crash_identity(cheap)
        if crash is None:
            return False
        known = self.crash_joins.known.get(crash)
        if known is not None:
            self.known_by_identity[ident] = known
            self.known_hits[known] += count
            self.crash_joins.known_joined += 1
            return True
        bucket = self.filer.buckets.get(self.crash_joins.buckets.get(crash, ""))
        if bucket is None or bucket.status != "ok":
            return False
        u.verdict, u.case = JOINED, None
        self.crash_joins.joined += 1
        self.first_of_signature.setdefault(u.finding.signature, ident)
        self.cheap_keys_seen.add(cheap.key)
        self.filer.file(case, u.finding, u, self._seen(u), bucket.explanation)
        self.unique[ident] = u
        if self.on_new_finding is not None:
            self.on_new_finding(case)
        return True

    def _journal_finding(self, ident: str, case: Case, f: Finding, cheap_key: str) -> None:
        """The finding, in the journal before anything is filed (Note [The journal is the campaign])."""
        if self.journal is None:
            return
        fact = {"ident": ident, "signature": f.signature, "oracle": f.oracle, "kind": f.kind,
                "severity": f.severity, "layer": f.layer, "cheap_key": cheap_key, "seed": case.seed,
                "seconds": round(self.seconds, 3), "triaged": self.triage is not None}
        if ident not in self.journaled:
            fact.update(program=case.source, message=f.message, case=encode(case), finding=encode(f))
            self.journaled.add(ident)
        self.journal.append("finding", **fact)

    def _known(self, explanation: Explanation) -> bool:
        """Known only on an identity key after triage: never on a cheap key, nor on one naming no mechanism. The
        known-issues file is asked once per key and the verdict journaled (a replay takes the journaled verdict,
        whatever the file says now)."""
        return explanation.ablated and not explanation.generic and self._known_key(explanation.key)

    def _known_key(self, key: str) -> bool:
        """Whether an identity key is a known issue, asked of the file once per key and journaled."""
        verdict = self.known_verdicts.get(key)
        if verdict is None:
            verdict = self.known_verdicts[key] = self.filer.known_key(key)
            if self.journal is not None:
                self.journal.append("known", key=key, known=verdict)
        return verdict

    def _seen(self, u: Unique) -> float:
        """When `u` was found: a bucket filed at the end or after triage was first seen then, not when filed."""
        return self.seconds if u.seen is None else min(u.seen, self.seconds)

    def _file(self, case: Case, u: Unique, ident: str, explanation: Explanation) -> bool:
        """File `u` under `explanation`'s key; False (and counted as known) when that key is a known issue."""
        f = u.finding
        if self._known(explanation):
            self.known_by_identity[ident] = explanation.key
            self.known_hits[explanation.key] += u.count
            return False
        self.first_of_signature.setdefault(f.signature, ident)
        self.cheap_keys_seen.add(u.cheap_key or explanation.key)
        self.filer.file(case, f, u, self._seen(u), explanation)
        self.unique[ident] = u
        if self.on_new_finding is not None:
            self.on_new_finding(case)
        return True

    def _queue(self, ident: str, case: Case, f: Finding, priority: int, cheap_key: str,
               crash: str | None = None, new_key: bool = False) -> None:
        """Write the job to `queue/`; hand it to the lanes unless it follows a crash of its identity in triage.
        `new_key`: a suspect that is the first of a cheap key no bucket has (Note [Which finding is triaged first])."""
        job = Job(ident, case, f, priority, {"bucket_cheap": cheap_key, **({NEW_KEY: True} if new_key else {})})
        spec = spec_for(self.config.spec, f.layer)
        self.pending.save(job, render_repro(case, f, spec, metadata_for(case, f, spec, cheap_key=cheap_key)))
        if not self.crash_joins.lead_or_follow(crash, ident, priority, job.meta):
            self.triage.submit(ident, case, f, job.meta, priority)

    def _release_followers(self, ident: str) -> None:
        """The leader `ident` came back: its followers are filed by the crash identity it bound, or triaged."""
        crash, followers = self.crash_joins.resolved(ident)
        for follower, priority, meta in followers:
            u = self.suspects.get(follower)
            if u is None or u.case is None:
                continue
            cheap = cheap_explanation(u.case, u.finding)
            count = u.count
            if self._join_crash(u.case, u, follower, cheap, count):
                del self.suspects[follower]
                self.pending.done(follower)
            elif not self.crash_joins.lead_or_follow(crash, follower, priority, meta):
                self.triage.submit(follower, u.case, u.finding, meta, priority)

    # ---- triage results ----
    def apply_triage(self, ident: str, status: str, payload: Any) -> None:
        """A triage job came back: move its identity where its explained key says (see the module docstring)."""
        if self.journal is not None:
            self.journal.append("triage", ident=ident, status=status, payload=_encode_payload(payload),
                                verdict=getattr(payload, "verdict", None), seconds=round(self.seconds, 3))
        if ident.startswith("localize "):
            self._apply_localization(ident[len("localize "):], status, payload)
            self.pending.done(ident)
            return
        try:
            self._apply(ident, status, payload)
        finally:
            self._release_followers(ident)

    def _apply(self, ident: str, status: str, payload: Any) -> None:
        suspect = ident in self.suspects
        u = self.suspects.pop(ident, None) or self.unique.get(ident)
        self.pending.done(ident)
        if u is None or u.case is None:
            return
        case, f = u.case, u.finding
        if status != "done" or not payload.minimized:
            note = f"triage failed: {payload}" if status != "done" else \
                "did not diverge again in the triage worker" + (
                    "; its repro did not reproduce in three fresh processes either" if payload.verdict == "flaky"
                    else "; its repro still reproduces in a fresh process")
            flaky = status == "done" and payload.verdict == "flaky"
            u.verdict = "flaky" if flaky else "unminimized"
            if suspect and not self._file(case, u, ident, cheap_explanation(case, f)):
                return
            self.filer.mark(u, u.verdict, note, payload.verdict if status == "done" else None)
            u.case = None
            return
        self.triaged_keys.add(u.cheap_key or cheap_explanation(case, f).key)
        explanation = filed(case, f, payload.explanation)  # an unexplained bucket keeps its cheap key
        twin = self.filer.twin(payload) if payload.explanation.unexplained else None
        if twin is not None:  # minimized to a program filed already: one fault (triage/program_form.py)
            explanation = twin.explanation
        key = explanation.key
        cheap = cheap_explanation(case, f) if f.crash_frames or f.raised else None  # only a crash binds an identity
        if self._known(explanation):
            if not suspect:
                self.filer.remove(u)
                del self.unique[ident]
            self.known_by_identity[ident] = key
            self.known_hits[key] += u.count
            self.crash_joins.learn(cheap, explanation, known=key)
            return
        self.first_of_signature.setdefault(f.signature, ident)
        u.verdict = payload.verdict
        bucket = self.filer.place(u, case, f, payload, self.seconds, explanation)
        if payload.verdict == "reproduces":
            self.crash_joins.learn(cheap, explanation, bucket=bucket.key)
        if suspect:
            self.unique[ident] = u
            if self.on_new_finding is not None:
                self.on_new_finding(case)
        u.case = None
        self._localize(bucket, payload)

    def _localize(self, bucket: Any, t: Any) -> None:
        """Queue the localization of a newly explained bucket of a silent divergence (lowest priority)."""
        if self.triage is None or bucket.key in self.localized or not wants_localization(t.explanation):
            return
        self.localized.add(bucket.key)
        ident = "localize " + bucket.key
        job = Job(ident, t.case, t.finding, LOCALIZE, {"bucket": bucket.key})
        self.pending.save(job)
        self.triage.submit(ident, t.case, t.finding, job.meta, LOCALIZE)

    def _apply_localization(self, key: str, status: str, payload: Any) -> None:
        bucket = self.filer.buckets.get(key)
        if bucket is None or status != "done":
            return
        bucket = self.filer.localized(bucket, payload)
        if self._known_key(bucket.key):  # its localized key is a known issue: its findings count as known
            for ident, u in list(self.unique.items()):
                if u.bucket == bucket.key:
                    self.known_by_identity[ident] = bucket.key
                    self.known_hits[bucket.key] += u.count
                    del self.unique[ident]
            self.filer.drop(bucket)

    def settle(self) -> None:
        """At the end: a suspect still waiting is filed under its cheap key, `unminimized`, when no finding of that
        key was filed or minimized (a bucket of its own); one whose cheap key is another finding's bucket, or was
        another finding's until triage moved it under its explained key or a known issue, stays out, listed as
        waiting (`bucket` null).
        Either way its job stays on disk for `dynfuzz triage`, and it is never counted with another finding or
        as known before its own triage.
        On 2.5.1 all 14 bug buckets a 20-minute run left unminimized were suspects of the second kind: each a
        wrong value whose cheap key's first suspect had been triaged into an explained bucket, filed again under
        that cheap key as if it were a fault nothing had looked at."""
        for ident, u in list(self.suspects.items()):
            if u.case is None:
                continue
            cheap = cheap_explanation(u.case, u.finding)
            if cheap.key not in self.filer.buckets.keys() | self.cheap_keys_seen | self.triaged_keys:  # never known
                self._file(u.case, u, ident, cheap)
                del self.suspects[ident]

    def harness_error(self, case: Case, error: HarnessError) -> None:
        """File a case dynfuzz could not judge under OUT/harness-errors/ (see run/harness_errors.py)."""
        if self.journal is not None:
            self.journal.append("harness-error", kind=error.kind, seed=case.seed, message=error.message)
        self.harness_errors.record(error, case.seed, case.families, case.source)

    def _attach_torch_log(self, new: list[Unique], text: str) -> None:
        """torch's log lines from the case, beside each finding example it just saved."""
        for u in new:
            if u.path is not None and u.path.exists():
                log = u.path.with_name(u.path.stem + ".torch.log")
                if not log.exists():
                    log.write_text(text)

    def unique_rows(self) -> list[Unique]:
        """Every identity: filed ones, and suspects waiting for their own triage (bucket None)."""
        return ledger_summary.unique_rows(self)

    def summary(self) -> dict[str, Any]:
        """The counting part of `summary.json` (the campaign adds settings of its processes and coverage)."""
        return ledger_summary.summary(self)
