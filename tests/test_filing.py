"""Filing findings into buckets: every identity (signature and cheap key) is triaged on its own before it is
counted as known or merged, nothing is overwritten, and what triage did not reach is kept on disk for
`dynfuzz triage`. A fake triage queue answers each job with what the test says its triage found, so nothing
here depends on the machine's timing."""
from __future__ import annotations

import dataclasses
import json

import pytest
from dynfuzz.campaign.campaign import Campaign, CampaignConfig
from dynfuzz.campaign.capacity import Capacity
from dynfuzz.campaign.ledger import Ledger, identity
from dynfuzz.generators.case import draw_case
from dynfuzz.oracles.model import finding
from dynfuzz.run.compilers import CompileSpec
from dynfuzz.triage.explain import NO_CONSTRUCT, cheap_explanation
from dynfuzz.triage.known import KnownIssues
from dynfuzz.triage.pending import LOCALIZE, NEW, SUSPECT
from dynfuzz.triage.queue import Triaged

SYMPTOM = finding("outputs", "miscompile", "out[0] values differ", "out[0] values differ")
OTHER = finding("outputs", "miscompile", "out[0] holds other values", "out[0] holds other values")


class FakeQueue:
    """The triage pool's interface; `answers` maps an identity to a function (case, finding) -> Triaged."""

    def __init__(self, answers=None):
        self.answers, self.jobs, self.ready, self.order = answers or {}, [], [], []
        self.job_seconds, self.recycled, self.metas = [], 0, {}

    def __len__(self):
        return len(self.jobs)

    def submit(self, ident, case, finding, meta=None, priority=0):
        from dynfuzz.triage.localize import Localization

        self.jobs.append(ident)
        self.order.append((priority, ident))
        self.metas[ident] = dict(meta or {})
        if ident in self.answers:
            self.ready.append((ident, "done", self.answers[ident](case, finding)))
        elif ident.startswith("localize "):  # no clear suspect: the key stays as triage named it
            self.ready.append((ident, "done", Localization()))

    def poll(self, wait=0.0):
        out, self.ready = self.ready, []
        self.jobs = [j for j in self.jobs if j not in {i for i, _, _ in out}]
        return out

    def drain(self, deadline):
        out, left = self.poll(), list(self.jobs)
        self.jobs = []
        return out, left

    def resize(self, lanes):
        pass

    def waiting_count(self, priority=None):
        return len(self.jobs)

    def waiting_bugs(self):
        return len(self.jobs)

    def mean_job_seconds(self, default=30.0):
        return default

    def close(self):
        pass


def triaged_as(construct, verdict="reproduces"):
    """A triage answer whose explained construct is `construct` (so its key is `miscompile: <family>`)."""
    def answer(case, f):
        explanation = dataclasses.replace(cheap_explanation(case, f), construct=construct, ablated=True)
        return Triaged(case, f, explanation, f"print('minimized: {construct}')\n", verdict, 0.1)
    return answer


def ledger_with(tmp_path, answers=None, known=()):
    known = KnownIssues({}, [{"key": k, "upstream": "https://example.invalid/1"} for k in known])
    ledger = Ledger(CampaignConfig(budget=1, out=tmp_path, spec=CompileSpec(), known=known, progress=False))
    ledger.triage = FakeQueue(answers)
    return ledger


def ident_of(case, f):
    return identity(f.signature, cheap_explanation(case, f).key)


def key_of(construct, f=SYMPTOM):
    return triaged_as(construct)(draw_case(0), f).explanation.key


def test_one_symptom_of_two_causes_is_filed_twice_and_a_known_cause_hides_neither(tmp_path):
    """Without triage: "out[0] values differ" from a known bug and from another program kind is a new finding,
    not one more count of the known issue (a campaign once counted a new torch bug into a known bucket); and a
    cheap key, the program's surface, never makes a finding known, even when an entry lists it."""
    first, second = draw_case(0), draw_case(1)
    key = cheap_explanation(first, SYMPTOM).key
    assert key != cheap_explanation(second, SYMPTOM).key
    ledger = ledger_with(tmp_path, known=[key])
    ledger.triage = None
    for case in (first, second, first, second, second):
        ledger.record(case, SYMPTOM)
    assert not ledger.known_hits
    assert sorted(u.count for u in ledger.unique.values()) == [2, 3]
    assert len(list((tmp_path / "findings").glob("*/examples/*.py"))) == 2


@pytest.mark.parametrize("second_cause", ["new", "known", "unanswered"])
def test_a_second_program_kind_of_a_filed_signature_waits_for_its_own_triage(tmp_path, second_cause):
    """A finding whose signature is filed under another cheap key is a suspect: a new cause gets its own bucket
    (minimized), a known one counts as known, and one the queue never answers is filed under its own cheap key
    at the end (never counted with the first finding, nor as known) and stays on disk for `dynfuzz triage`."""
    first, second = draw_case(0), draw_case(1)
    suspect = ident_of(second, SYMPTOM)
    answers = {"new": {suspect: triaged_as("a second cause")}, "known": {suspect: triaged_as("a known cause")},
               "unanswered": {}}[second_cause]
    ledger = ledger_with(tmp_path, answers, known=[key_of("a known cause")] if second_cause == "known" else ())
    ledger.record(first, SYMPTOM)
    ledger.record(second, SYMPTOM)
    ledger.record(second, SYMPTOM)
    assert len(ledger.unique) == 1 and suspect in ledger.suspects and (suspect not in ledger.unique)
    assert (SUSPECT, suspect) in ledger.triage.order
    for ident, status, payload in ledger.triage.poll():
        ledger.apply_triage(ident, status, payload)
    ledger.settle()
    first_bucket = ledger.unique[ident_of(first, SYMPTOM)].bucket
    if second_cause == "new":
        assert sorted(u.count for u in ledger.unique.values()) == [1, 2]
        new = ledger.filer.buckets[key_of("a second cause")]
        assert new.status == "ok" and "a second cause" in (new.folder / "repro.py").read_text()
    elif second_cause == "known":
        assert len(ledger.unique) == 1 and dict(ledger.known_hits) == {key_of("a known cause"): 2}
    else:
        assert sorted(u.count for u in ledger.unique.values()) == [1, 2] and not ledger.known_hits
        assert ledger.unique[suspect].bucket != first_bucket
        assert ledger.filer.buckets[ledger.unique[suspect].bucket].status == "unminimized"
        assert [j.ident for j in ledger.pending.load()] == [ident_of(first, SYMPTOM), suspect]


def test_the_first_suspect_of_a_cheap_key_no_bucket_has_is_flagged_to_rank_with_new_keys(tmp_path):
    """A suspect only because its signature was seen is a bucket waiting for its key (the campaign's end files it
    unminimized): the first of its cheap key ranks with the new keys; a second suspect of that key, and a suspect
    of a filed cheap key, do not."""
    from dynfuzz.triage.pending import NEW_KEY

    first, second, third = draw_case(0), draw_case(1), draw_case(2)
    assert len({cheap_explanation(case, SYMPTOM).key for case in (first, second, third)}) == 3
    ledger = ledger_with(tmp_path)
    for case, f in ((first, SYMPTOM), (third, OTHER), (second, SYMPTOM), (second, OTHER), (first, OTHER)):
        ledger.record(case, f)
    metas = ledger.triage.metas
    assert [p for p, _ in ledger.triage.order] == [NEW, NEW, SUSPECT, SUSPECT, SUSPECT]
    assert metas[ident_of(second, SYMPTOM)].get(NEW_KEY) is True
    assert NEW_KEY not in metas[ident_of(second, OTHER)], "the second suspect of that key"
    assert NEW_KEY not in metas[ident_of(first, OTHER)], "a suspect of a filed cheap key"


def test_a_suspect_left_waiting_whose_cheap_key_triage_moved_to_an_explained_bucket_gets_no_bucket_of_its_own(
        tmp_path):
    """On 2.5.1 all 14 bug buckets a run left unminimized were suspects filed at the end under a cheap key whose
    first finding triage had already explained under another key: each looked like a fault nothing had looked at.
    Such a suspect stays waiting (no bucket, its job on disk), as one whose cheap key is a bucket does; a suspect
    of a cheap key no finding had still gets its own `unminimized` bucket."""
    cases = [draw_case(i) for i in range(4)]
    assert len({cheap_explanation(case, SYMPTOM).key for case in cases}) == 4
    moved, other_key = ident_of(cases[1], SYMPTOM), cheap_explanation(cases[2], OTHER).key
    ledger = ledger_with(tmp_path, {ident_of(cases[0], SYMPTOM): triaged_as("a cause"), moved: triaged_as("a cause")})
    for case, f in ((cases[0], SYMPTOM), (cases[2], OTHER), (cases[1], SYMPTOM)):
        ledger.record(case, f)
    for ident, status, payload in ledger.triage.poll():
        ledger.apply_triage(ident, status, payload)
    assert ledger.unique[moved].bucket == key_of("a cause")
    waiting, own = ident_of(cases[1], OTHER), ident_of(cases[3], SYMPTOM)
    ledger.record(cases[1], OTHER)
    ledger.record(cases[3], SYMPTOM)
    assert {waiting, own} <= set(ledger.suspects)
    ledger.settle()
    assert waiting in ledger.suspects and waiting not in ledger.unique
    assert set(ledger.filer.buckets) == {key_of("a cause"), other_key, cheap_explanation(cases[3], SYMPTOM).key}
    assert ledger.filer.buckets[ledger.unique[own].bucket].status == "unminimized"
    assert {j.ident for j in ledger.pending.load() if not j.ident.startswith("localize ")} >= {waiting, own}


def test_a_new_signature_with_a_filed_cheap_key_is_triaged_before_it_joins_that_bucket(tmp_path):
    """Two signatures of one program kind: the second does not go into the first's bucket untriaged, and when the
    first turns out to be a known issue, the second (another cause) is not counted as known with it."""
    case = draw_case(0)
    first, second = ident_of(case, SYMPTOM), ident_of(case, OTHER)
    ledger = ledger_with(tmp_path, {first: triaged_as("a known cause"), second: triaged_as("another cause")},
                         known=[key_of("a known cause")])
    ledger.record(case, SYMPTOM)
    ledger.record(case, OTHER)
    assert second in ledger.suspects and len(ledger.filer.buckets) == 1
    for ident, status, payload in ledger.triage.poll():
        ledger.apply_triage(ident, status, payload)
    assert dict(ledger.known_hits) == {key_of("a known cause"): 1}
    assert list(ledger.unique) == [second] and ledger.unique[second].bucket == key_of("another cause", OTHER)


def test_two_findings_of_one_signature_keep_both_programs_when_their_buckets_merge(tmp_path):
    """Two identities with one signature (two program kinds) whose triage names one fault: both programs stay in
    the merged bucket's examples/, and every unique_findings[].file holds its own finding's program."""
    first, second = draw_case(0), draw_case(1)
    answers = {ident_of(first, SYMPTOM): triaged_as("one cause"), ident_of(second, SYMPTOM): triaged_as("one cause")}
    ledger = ledger_with(tmp_path, answers)
    ledger.record(first, SYMPTOM)
    ledger.record(second, SYMPTOM)
    for ident, status, payload in ledger.triage.poll():
        ledger.apply_triage(ident, status, payload)
    (bucket,) = ledger.filer.buckets.values()
    examples = sorted((bucket.folder / "examples").glob("*.py"))
    assert len(examples) == 2 and len({p.read_text() for p in examples}) == 2
    rows = ledger.summary()["unique_findings"]
    files = {r["file"]: tmp_path / r["file"] for r in rows}  # summary.json's paths are relative to OUT
    assert len(rows) == 2 and set(files.values()) == set(examples)
    for row in rows:
        u = next(u for u in ledger.unique.values() if u.path == files[row["file"]])
        text = files[row["file"]].read_text()
        assert f"seed {u.seed}" in text or str(u.seed) in text


def test_a_suspect_waits_behind_a_new_cheap_key():
    """The triage pool hands out a new cheap key before a suspect queued earlier, and a localization last."""
    from dynfuzz.triage.queue import TriagePool

    pool = TriagePool(CompileSpec(), budget=1.0, lanes=1)
    started = []
    pool._lane(0).start = lambda ident, *rest: started.append(ident) or setattr(pool.lanes[0], "current", (ident, 0))
    case = draw_case(0)
    pool.lanes[0].current = ("busy", 0.0)  # the one lane is busy: submissions wait
    pool.submit("localize k", case, SYMPTOM, {}, LOCALIZE)
    pool.submit("suspect", case, SYMPTOM, {}, SUSPECT)
    pool.submit("new", case, SYMPTOM, {}, NEW)
    order = []
    for _ in range(3):
        pool.lanes[0].current = None
        pool._feed()
        order.append(pool.lanes[0].current[0])
    assert order == ["new", "suspect", "localize k"]


def test_workers_are_lent_to_triage_while_findings_wait_and_come_back():
    """Note [Capacity follows the queue]: four workers, a growing queue takes up to three (one keeps drawing),
    within the allowance of a quarter of the workers' time; an empty queue gives them all back; a queue that
    would not drain in the time left on every process stops the drawing, whatever the allowance, and drawing
    starts again once it would."""
    capacity = Capacity(4, lanes=1)
    assert capacity.converted(elapsed=100, remaining=500, waiting=0, job_seconds=20, open_for_new=True) == 0
    assert capacity.converted(elapsed=101, remaining=499, waiting=1, job_seconds=20, open_for_new=True) == 1
    assert capacity.converted(elapsed=102, remaining=498, waiting=10, job_seconds=20, open_for_new=True) == 3
    assert capacity.converted(elapsed=112, remaining=488, waiting=0, job_seconds=20, open_for_new=True) == 0
    lent = capacity.used
    assert 30 <= lent <= 31  # 1 worker for 1 s, then 3 for 10 s
    capacity = Capacity(4, lanes=1)
    assert capacity.converted(elapsed=800, remaining=60, waiting=40, job_seconds=20, open_for_new=True) == 4
    assert capacity.converted(elapsed=801, remaining=59, waiting=40, job_seconds=20, open_for_new=False) == 0
    spent = Capacity(2, lanes=1)
    spent.used = 10_000.0  # the allowance is used up: generation keeps its workers while the queue would drain
    assert spent.converted(elapsed=100, remaining=400, waiting=50, job_seconds=20, open_for_new=True) == 0
    # 50 jobs of 20 s on three processes take 333 s: with 300 s left, every worker triages
    assert spent.converted(elapsed=200, remaining=300, waiting=50, job_seconds=20, open_for_new=True) == 2
    assert spent.converted(elapsed=260, remaining=240, waiting=20, job_seconds=20, open_for_new=True) == 0
    # refusals do not stop the drawing: 50 jobs wait, 5 of them a miscompile's or a crash's
    assert spent.converted(elapsed=300, remaining=300, waiting=50, job_seconds=20, open_for_new=True,
                           bugs_waiting=5) == 0


def test_dynfuzz_triage_finishes_what_a_campaign_left_queued(tmp_path):
    """A campaign whose triage never answered leaves its findings on disk (`queue/`) and its suspects filed under
    cheap keys; `dynfuzz triage DIR` runs them later, re-keys the buckets in place and empties the queue."""
    from dynfuzz.campaign.finish import finish_triage

    out = tmp_path / "out"
    cases = [draw_case(0), draw_case(1)]
    campaign = Campaign(CampaignConfig(budget=1, out=out, spec=CompileSpec(), progress=False))
    campaign.ledger.triage = FakeQueue()
    campaign.triage = campaign.ledger.triage
    for case in cases:
        campaign.ledger.record(case, SYMPTOM)
    campaign.triage_drain(0.0)
    campaign.write_summary()
    before = json.loads((out / "summary.json").read_text())
    assert before["queued"] == 2 and {b["status"] for b in before["buckets"]} == {"unminimized"}
    assert len(before["buckets"]) == 2  # the suspect is filed under its own cheap key, not counted with the first

    class AnsweringPool(FakeQueue):
        def __init__(self, *args, **kwargs):
            super().__init__({ident_of(c, SYMPTOM): triaged_as("one cause") for c in cases})

    summary = finish_triage(out, budget=30, workers=2, minimize_budget=10, lanes_cls=AnsweringPool)
    assert summary["queued"] == 0 and not list((out / "queue").glob("*.pkl"))
    assert [b["key"] for b in summary["buckets"]] == [key_of("one cause")]
    assert summary["buckets"][0]["status"] == "ok" and summary["buckets"][0]["count"] == 2
    assert json.loads((out / "summary.json").read_text())["buckets"] == summary["buckets"]
    assert summary["cases"] == before["cases"] and summary["triage_runs"][-1]["jobs"] == 3  # and a localization


def _not_minimized(verdict):
    """A triage answer for a finding that did not diverge again: its program's own fresh runs gave `verdict`."""
    def answer(case, f):
        return Triaged(case, f, cheap_explanation(case, f), "print('as found')\n", verdict, 0.1, False)
    return answer


def _reproduced_unexplained(case, f):
    return Triaged(case, f, cheap_explanation(case, f), "print('minimized')\n", "reproduces", 0.1)


def test_an_untriaged_suspect_is_never_settled_into_another_findings_bucket(tmp_path):
    """Same program, another signature: a suspect of the first's bucket. Its triage never answered: at the end it
    waits in the queue, listed without a bucket, and the first finding's bucket still counts only the first."""
    first = draw_case(0)
    ledger = ledger_with(tmp_path)
    ledger.record(first, SYMPTOM)
    ledger.record(first, OTHER)
    suspect = ident_of(first, OTHER)
    assert suspect in ledger.suspects
    ledger.settle()
    (bucket,) = ledger.filer.buckets.values()
    assert bucket.count == 1 and [m.finding.signature for m in bucket.members] == [SYMPTOM.signature]
    row = next(r for r in ledger.summary()["unique_findings"] if r["signature"] == OTHER.signature)
    assert row["bucket"] is None and row["waiting"] and row["file"].startswith("queue/")
    assert suspect in [j.ident for j in ledger.pending.load()]


def test_a_bucket_is_flaky_only_by_its_members_own_verdicts(tmp_path):
    """A flaky suspect does not make a bucket whose first finding was never re-run flaky; a bucket flaky by its
    first finding is not flaky any more once a later member reproduces."""
    first = draw_case(0)
    ledger = ledger_with(tmp_path, {ident_of(first, OTHER): _not_minimized("flaky")})
    ledger.record(first, SYMPTOM)
    ledger.record(first, OTHER)
    for ident, status, payload in ledger.triage.poll():
        ledger.apply_triage(ident, status, payload)
    (bucket,) = ledger.filer.buckets.values()
    assert ledger.unique[ident_of(first, OTHER)].verdict == "flaky"
    assert bucket.status == "unminimized", "the first finding was never re-run: nothing says it is flaky"

    ledger = ledger_with(tmp_path / "healed", {ident_of(first, SYMPTOM): _not_minimized("flaky"),
                                               ident_of(first, OTHER): _reproduced_unexplained})
    ledger.record(first, SYMPTOM)
    for ident, status, payload in ledger.triage.poll():
        ledger.apply_triage(ident, status, payload)
    (bucket,) = ledger.filer.buckets.values()
    assert bucket.status == "flaky"
    ledger.record(first, OTHER)
    for ident, status, payload in ledger.triage.poll():
        ledger.apply_triage(ident, status, payload)
    (bucket,) = ledger.filer.buckets.values()
    assert bucket.count == 2 and bucket.status in ("ok", "unexplained") and bucket.verdict == "reproduces"


FRAMES = ("torch/_dynamo/variables/user_defined.py:call_method", "torch/_dynamo/variables/misc.py:call_function",
          "torch/_dynamo/symbolic_convert.py:CALL")


def crash(frames=FRAMES, message="boom"):
    return finding("exceptions", "crash", "call 0: compiler crashed with AssertionError", f"AssertionError {message}",
                   call=0, details=(f"compiled: AssertionError: {message}",), torch_frame=frames[0],
                   key_frame=frames[0], crash_frames=frames)


def triaged_crash(frames=FRAMES, verdict="reproduces"):
    """A crash's triage answer keyed by its frames, as explain names an explained crash."""
    def answer(case, f):
        explanation = dataclasses.replace(cheap_explanation(case, f), ablated=True,
                                          mechanism=f"AssertionError in {' < '.join(frames)}")
        return Triaged(case, f, explanation, "print('minimized crash')\n", verdict, 0.1)
    return answer


def triaged_then_found(ledger, leader, *later):
    """Record the `(case, finding)` leader and apply its triage, then record the later ones: the jobs they queued."""
    ledger.record(*leader)
    for ident, status, payload in ledger.triage.poll():
        ledger.apply_triage(ident, status, payload)
    jobs = len(ledger.triage.order)
    for case, f in later:
        ledger.record(case, f)
    return [ident for _, ident in ledger.triage.order[jobs:]]


@pytest.mark.parametrize("how", ["bucket", "known", "moved", "flaky"])
def test_a_crash_triage_named_by_its_own_frames_files_later_findings_of_those_frames_untriaged(tmp_path, how):
    """Note [A crash's identity is cheap]: once a crash's triage keyed it by exactly the frames its finding
    carried, a later finding of those frames (another program, another message) joins its `ok` bucket, or counts
    as its known issue, with no triage job; a crash whose minimization moved its frames, or whose repro did not
    reproduce, binds nothing, and a crash of other frames still waits for its own triage."""
    first, second, third = draw_case(0), draw_case(1), draw_case(2)
    a, b = crash(), crash(message="other words")
    other = crash(frames=("torch/_dynamo/variables/dicts.py:call_method",) + FRAMES[1:])
    named = {"bucket": triaged_crash(), "known": triaged_crash(), "flaky": triaged_crash(verdict="flaky"),
             "moved": triaged_crash(frames=("torch/_dynamo/variables/lists.py:call_method",) + FRAMES[1:])}[how]
    known_key = named(first, a).explanation.key
    ledger = ledger_with(tmp_path, {ident_of(first, a): named}, known=[known_key] if how == "known" else ())
    queued = triaged_then_found(ledger, (first, a), (second, b), (third, other))
    assert ident_of(third, other) in queued, "a crash of other frames is triaged"
    if how == "bucket":
        assert ident_of(second, b) not in queued
        joined = ledger.unique[ident_of(second, b)]
        assert joined.bucket == known_key and joined.verdict == "joined" and joined.path is not None
        assert ledger.filer.buckets[known_key].status == "ok" and ledger.crash_joins.joined == 1
    elif how == "known":
        assert ident_of(second, b) not in queued and dict(ledger.known_hits) == {known_key: 2}
    else:
        assert ident_of(second, b) in queued and ledger.crash_joins.joined == 0 and not ledger.known_hits


@pytest.mark.parametrize("how", ["bucket", "moved"])
def test_a_crash_found_while_its_identity_is_in_triage_waits_for_that_result_instead_of_its_own_job(tmp_path, how):
    """A crash of the frames of one already in triage follows it: its job is written to queue/ but not handed to
    the lanes; the leader's result then files it by the identity it bound, or, when it bound none, hands it to the
    lanes. A crash of other frames is not held back."""
    first, second, third = draw_case(0), draw_case(1), draw_case(2)
    a, b = crash(), crash(message="other words")
    other = crash(frames=("torch/_dynamo/variables/dicts.py:call_method",) + FRAMES[1:])
    named = {"bucket": triaged_crash(),
             "moved": triaged_crash(frames=("torch/_dynamo/variables/lists.py:call_method",) + FRAMES[1:])}[how]
    ledger = ledger_with(tmp_path, {ident_of(first, a): named})
    ledger.record(first, a)
    ledger.record(second, b)
    ledger.record(third, other)
    follower = ident_of(second, b)
    submitted = [ident for _, ident in ledger.triage.order]
    assert follower not in submitted and ident_of(third, other) in submitted and follower in ledger.suspects
    assert follower in [j.ident for j in ledger.pending.load()], "a follower's job is on disk"
    assert ledger.summary()["crash_joins"]["following"] == 1
    for ident, status, payload in ledger.triage.poll():
        ledger.apply_triage(ident, status, payload)
    submitted = [ident for _, ident in ledger.triage.order]
    if how == "bucket":
        assert follower not in submitted and follower not in ledger.suspects
        assert ledger.unique[follower].verdict == "joined" and follower not in [j.ident for j in ledger.pending.load()]
    else:
        assert follower in submitted and follower in ledger.suspects


def test_a_crash_s_cheap_key_is_its_frames_not_its_program_surface():
    """Two programs crashing in the same frames get one cheap key (one bucket before triage), as their explained
    keys would be; other frames, another key. Without frames (a RecursionError) the surface still names it."""
    first, second = draw_case(0), draw_case(1)
    assert cheap_explanation(first, SYMPTOM).key != cheap_explanation(second, SYMPTOM).key, "surfaces differ"
    assert cheap_explanation(first, crash()).key == cheap_explanation(second, crash(message="x")).key
    assert " < ".join(FRAMES) in cheap_explanation(first, crash()).key
    other = crash(frames=("torch/_dynamo/variables/dicts.py:call_method",) + FRAMES[1:])
    assert cheap_explanation(first, other).key != cheap_explanation(first, crash()).key
    bare = dataclasses.replace(crash(), crash_frames=())
    assert cheap_explanation(first, bare).key != cheap_explanation(second, bare).key


def test_where_to_look_names_suspects_only_when_one_leads(tmp_path):
    """Localization tied hundreds of torch functions at one score on most real faults; a table of the first five
    (torch.compile's wrappers) in report.md sent a triager nowhere. A leading suspect is still shown."""
    from dynfuzz.triage.filing import Bucket, BucketFiler

    filer = BucketFiler(tmp_path, CompileSpec(), KnownIssues(), "2.13.0")
    case = draw_case(1)
    expl = cheap_explanation(case, finding("outputs", "miscompile", "call 0: out[0] values differ", "k"))
    folder = tmp_path / "b"
    folder.mkdir()
    (folder / "report.md").write_text("# a bug\n")
    row = {"function": "torch/_dynamo/side_effects.py:SideEffects.codegen_update_mutated", "failing": 1,
           "passing": 3, "lines": [10]}
    tied = [dict(row, score=0.5), dict(row, function="torch/__init__.py:_check", score=0.5)]
    bucket = Bucket("k", expl, 0.0, folder, suspects=tied)
    filer._write_where_to_look(bucket)
    text = (folder / "report.md").read_text()
    assert "no leading function" in text and "_check" not in text and "| function |" not in text
    bucket.suspects = [dict(row, score=0.9), dict(row, function="torch/__init__.py:_check", score=0.5)]
    filer._write_where_to_look(bucket)
    text = (folder / "report.md").read_text()
    assert text.count("### Where to look") == 1 and "SideEffects.codegen_update_mutated" in text


@pytest.mark.parametrize("answered", [True, False])
def test_a_bucket_filed_late_was_first_seen_when_its_finding_was(tmp_path, answered):
    """A suspect's bucket is opened when its triage comes back, or at the end by `settle`: its
    `first_seen_seconds` is still the campaign second its finding was found (a 2.5.1 run dated 49 of its 144 bug
    buckets at 1200 s, the end, and its curve of distinct faults over time was wrong by that much)."""
    first, second = draw_case(0), draw_case(1)
    suspect = ident_of(second, SYMPTOM)
    ledger = ledger_with(tmp_path, {suspect: triaged_as("a second cause")} if answered else {})
    ledger.seconds = 5.0
    ledger.record(first, SYMPTOM)
    ledger.seconds = 42.0
    ledger.record(second, SYMPTOM)
    ledger.seconds = 900.0
    for ident, status, payload in ledger.triage.poll():
        ledger.apply_triage(ident, status, payload)
    ledger.settle()
    bucket = ledger.filer.buckets[ledger.unique[suspect].bucket]
    assert bucket.first_seen == 42.0
    assert bucket.summary()["first_seen_seconds"] == 42.0
    if answered:
        assert bucket.extra["minimized_seconds"] == 900.0


DESCRIPTOR = '''import torch


class {field}:
    def __get__(self, obj, objtype=None):
        pass


class {holder}:
    w = {field}()


def f({arg}):
    return ({arg} + isinstance({holder}.w, {field}),)


def inputs(device, call=0):
    return (torch.zeros(1, device=device),)
'''


def minimized_to(source):
    """A triage answer that minimized the finding to `source` and could not name its cause (`unexplained`)."""
    def answer(case, f):
        explanation = dataclasses.replace(cheap_explanation(case, f), ablated=True, construct=NO_CONSTRUCT)
        assert explanation.unexplained
        return Triaged(dataclasses.replace(case, source=source), f, explanation, source, "reproduces", 0.1)
    return answer


@pytest.mark.parametrize("same_program", [True, False])
def test_findings_minimized_to_one_program_are_one_bucket_whatever_their_surfaces(tmp_path, same_program):
    """triage/program_form.py: two findings of different surfaces (cheap keys) that triage minimized to the same
    program up to its names, and could not explain, are one bucket (a 2.5.1 run filed one descriptor fault under
    five surface keys); a program that differs in anything but names (here the attribute read) stays apart."""
    first, second = draw_case(0), draw_case(1)
    assert cheap_explanation(first, SYMPTOM).key != cheap_explanation(second, SYMPTOM).key
    one = DESCRIPTOR.format(field="Field0", holder="Holder0", arg="x")
    other = DESCRIPTOR.format(field="a", holder="b", arg="y")
    if not same_program:
        other = other.replace("b.w, a", "b().w, a")
    ledger = ledger_with(tmp_path, {ident_of(first, SYMPTOM): minimized_to(one),
                                    ident_of(second, SYMPTOM): minimized_to(other)})
    ledger.record(first, SYMPTOM)
    ledger.record(second, SYMPTOM)
    for ident, status, payload in ledger.triage.poll():
        ledger.apply_triage(ident, status, payload)
    ledger.settle()
    buckets = list(ledger.filer.buckets.values())
    assert len(buckets) == (1 if same_program else 2)
    assert {b.status for b in buckets} == {"unexplained"}
    assert sorted(b.count for b in buckets) == ([2] if same_program else [1, 1])


def test_a_programs_form_forgets_names_and_keeps_what_the_program_does():
    from dynfuzz.generators.case import Case
    from dynfuzz.triage.program_form import program_form

    def form(source, f=SYMPTOM, **case):
        return program_form(Case(source=source, **case), f)

    base = DESCRIPTOR.format(field="Field0", holder="Holder0", arg="x")
    assert form(base) == form(DESCRIPTOR.format(field="a", holder="b", arg="y"))
    assert form(base) != form(base.replace("isinstance", "callable").replace(", Field0)", ")"))
    assert form(base) != form(base.replace(".w", ".v"))  # attribute names are what the program does
    assert form(base) != form(base.replace("torch.zeros(1", "torch.ones(1"))
    assert form(base) != form(base, dynamo_config_items=(("capture_scalar_outputs", True),))
    assert form("def f(:\n") is None


def raised(message):
    """A finding of an error the program raised under the compiled frame (no frame of torch names it)."""
    from dynfuzz.oracles.exceptions import raised_outside
    from dynfuzz.oracles.model import ExcInfo

    shape = raised_outside(ExcInfo("AttributeError", "builtins", message))
    return finding("exceptions", "spurious-exception", "call 0: compiled raised AttributeError, eager did not",
                   f"AttributeError {message}", call=0, details=(f"compiled: AttributeError: {message}",),
                   torch_frame="torch/_dynamo/eval_frame.py:_fn", raised=shape)


def test_an_error_the_program_raised_is_joined_by_its_message_s_shape_once_triage_bound_it(tmp_path):
    """Note [An error the program raised is not torch's]: its cheap key is the shape of its message, not the
    program's surface, and once triage keyed one by exactly that shape, a later one of the same shape (another
    attribute of the same wrong object, another program) joins its bucket with no job; another shape is triaged."""
    first, second, third = draw_case(0), draw_case(1), draw_case(2)
    a = raised("'tuple_iterator' object has no attribute 'close'")
    b = raised("'tuple_iterator' object has no attribute 'send'")
    other = raised("'int' object has no attribute 'device'")
    assert cheap_explanation(first, a).key == cheap_explanation(second, b).key != cheap_explanation(third, other).key
    assert "program raising AttributeError: 'tuple_iterator' object has no attribute" in cheap_explanation(first, a).key

    def answer(case, f):
        explanation = dataclasses.replace(cheap_explanation(case, f), ablated=True, mechanism=f.raised)
        return Triaged(case, f, explanation, "print('minimized')\n", "reproduces", 0.1)

    ledger = ledger_with(tmp_path, {ident_of(first, a): answer})
    queued = triaged_then_found(ledger, (first, a), (second, b), (third, other))
    assert ident_of(second, b) not in queued and ident_of(third, other) in queued
    joined = ledger.unique[ident_of(second, b)]
    assert joined.verdict == "joined" and joined.bucket == answer(first, a).explanation.key
