"""Which finding is triaged first (Note [Which finding is triaged first], triage/pending.py), and how long a run
that ended by `--cases` may keep triaging: on a torch with many faults the queue is longer than the lanes get
through, so the order decides which buckets end up minimized."""
from __future__ import annotations

import os
import pickle
import time

from dynfuzz.generators.case import Case
from dynfuzz.oracles import Finding
from dynfuzz.oracles.model import finding
from dynfuzz.run.compilers import CompileSpec
from dynfuzz.triage.pending import LOCALIZE, NEW, NEW_KEY, QUEUED, SUSPECT, Job, PendingJobs, job_rank

CASE = Case(source="def f(x):\n    return x\n")
MISCOMPILE = finding("outputs", "miscompile", "out[0] values differ", "out[0] values differ")
CRASH = finding("exceptions", "crash", "compiled: IndexError", "IndexError")
REFUSAL = finding("exceptions", "unsupported", "compiled: Unsupported", "Unsupported")


def _served(jobs: list[tuple[str, Finding, int, float]], new_keys: tuple[str, ...] = ()) -> list[str]:
    """Submit `(ident, finding, priority, queued)` jobs (those named in `new_keys` flagged `NEW_KEY`) to a
    one-lane pool whose lane is busy, then free the lane again and again: the order the jobs are started in."""
    from dynfuzz.triage.queue import TriagePool

    pool = TriagePool(CompileSpec(), budget=1.0, lanes=1)
    lane = pool._lane(0)
    started: list[tuple[str, dict]] = []
    lane.start = lambda ident, case, f, meta: started.append((ident, meta)) or setattr(lane, "current", (ident, 0))
    lane.current = ("busy", 0.0)
    for ident, f, priority, queued in jobs:
        pool.submit(ident, CASE, f, {"bucket_cheap": ident, QUEUED: queued, **({NEW_KEY: True} if ident in new_keys
                                                                                 else {})}, priority)
    for _ in jobs:
        lane.current = None
        pool._feed()
    assert all(QUEUED not in meta and NEW_KEY not in meta and meta["bucket_cheap"] == ident
               for ident, meta in started), \
        "the stamp and the rank flag are the pool's, never the triage worker's (they would enter the repro)"
    return [ident for ident, _ in started]


def test_every_bug_bucket_s_first_job_before_any_suspect_miscompiles_first_refusals_last_newest_first():
    """On 2.13 a 500-case run minimized 5 refusal buckets and left 9 of its 10 bug buckets unminimized: jobs were
    served first come first served within "new cheap key", whatever their tier. On 2.5.1, with the tier ahead of
    new-or-suspect, a crash found at 5 s waited behind 132 miscompile jobs, most of them suspects, and its bucket
    ended unminimized."""
    order = _served([
        ("refusal new", REFUSAL, NEW, 1.0),
        ("crash new", CRASH, NEW, 2.0),
        ("miscompile suspect", MISCOMPILE, SUSPECT, 3.0),
        ("localize miscompile", MISCOMPILE, LOCALIZE, 4.0),
        ("miscompile new, older", MISCOMPILE, NEW, 5.0),
        ("refusal suspect", REFUSAL, SUSPECT, 6.0),
        ("miscompile new, newer", MISCOMPILE, NEW, 7.0),
        ("crash suspect", CRASH, SUSPECT, 8.0),
    ])
    assert order == ["miscompile new, newer", "miscompile new, older", "crash new", "miscompile suspect",
                     "crash suspect", "localize miscompile", "refusal new", "refusal suspect"]


def test_a_suspect_of_a_cheap_key_no_bucket_has_ranks_after_new_keys_before_other_suspects_even_when_oldest():
    """On 2.5.1, 7 of the 8 bug buckets a run left unminimized were wrong values that came as suspects in its first
    8 s (only the outputs oracle's signature was seen): the oldest suspects, never reached, filed at the end as
    buckets of their own."""
    order = _served([
        ("miscompile suspect of a new key", MISCOMPILE, SUSPECT, 1.0),
        ("crash suspect of a new key", CRASH, SUSPECT, 2.0),
        ("miscompile suspect", MISCOMPILE, SUSPECT, 3.0),
        ("crash new", CRASH, NEW, 4.0),
        ("refusal suspect of a new key", REFUSAL, SUSPECT, 5.0),
        ("miscompile new", MISCOMPILE, NEW, 6.0),
    ], new_keys=("miscompile suspect of a new key", "crash suspect of a new key", "refusal suspect of a new key"))
    assert order == ["miscompile new", "crash new", "miscompile suspect of a new key", "crash suspect of a new key",
                     "miscompile suspect", "refusal suspect of a new key"]


def test_jobs_without_a_stamp_are_ordered_by_when_they_were_submitted():
    from dynfuzz.triage.queue import TriagePool

    pool = TriagePool(CompileSpec(), budget=1.0, lanes=1)
    pool._lane(0).current = ("busy", 0.0)
    for ident in ("a", "b", "c"):
        pool.submit(ident, CASE, CRASH, {}, NEW)
    assert [job[0] for _, _, job in pool.waiting] == ["c", "b", "a"]
    assert pool.waiting_count(NEW) == 3 and pool.waiting_count(SUSPECT) == 0
    pool.submit("r", CASE, REFUSAL, {}, NEW)
    pool.submit("m", CASE, MISCOMPILE, {}, SUSPECT)
    pool.submit("localize k", CASE, MISCOMPILE, {}, LOCALIZE)
    assert pool.waiting_bugs() == 4  # the crashes and the miscompile; not the refusal, nor the localization


def test_a_job_of_unknown_finding_ranks_last_and_the_rank_follows_the_tier():
    flagged = {NEW_KEY: True}
    assert job_rank(NEW, MISCOMPILE) < job_rank(NEW, CRASH) < job_rank(SUSPECT, MISCOMPILE, flagged) \
        < job_rank(SUSPECT, CRASH, flagged) < job_rank(SUSPECT, MISCOMPILE) \
        < job_rank(SUSPECT, CRASH) < job_rank(LOCALIZE, CRASH) < job_rank(NEW, REFUSAL) < job_rank(SUSPECT, REFUSAL) \
        < job_rank(NEW, None)


def test_the_queue_on_disk_loads_in_the_order_the_pool_serves(tmp_path):
    """`dynfuzz triage DIR` and `--resume` submit the jobs in `load()` order; a job pickled before jobs were
    stamped counts as queued when its file was written."""
    pending = PendingJobs(tmp_path / "queue")
    for ident, f, priority in [("refusal", REFUSAL, NEW), ("crash", CRASH, NEW), ("old miscompile", MISCOMPILE, NEW),
                               ("suspect", MISCOMPILE, SUSPECT), ("new miscompile", MISCOMPILE, NEW)]:
        pending.save(Job(ident, CASE, f, priority, {}))
        time.sleep(0.01)
    unstamped = Job("unstamped miscompile", CASE, MISCOMPILE, NEW, {})
    path = tmp_path / "queue" / f"{unstamped.file_id}.pkl"
    path.write_bytes(pickle.dumps(unstamped))
    os.utime(path, (1.0, 1.0))  # written long ago
    assert [j.ident for j in pending.load()] == ["new miscompile", "old miscompile", "unstamped miscompile",
                                                 "crash", "suspect", "refusal"]


def test_drain_grace_gives_a_run_that_ended_by_cases_what_is_left_of_its_budget():
    from dynfuzz.campaign.capacity import drain_grace, triage_grace

    assert drain_grace(900, None, left=660, ended_by_cases=True) == 660
    assert drain_grace(900, None, left=660, ended_by_cases=False) == triage_grace(900) == 60
    assert drain_grace(900, None, left=-3, ended_by_cases=True) == 60  # the budget ran out too
    assert drain_grace(900, 120.0, left=30, ended_by_cases=True) == 120.0  # a configured grace is the least


def test_a_campaign_that_ends_by_cases_drains_triage_for_the_rest_of_its_budget(tmp_path):
    """A 500-case run on 2.13 reached its cases at 238 s of a 900 s budget and gave triage at most 60 s: the
    drain a run ended by --cases journals has the rest of its budget."""
    from dynfuzz.campaign.campaign import Campaign, CampaignConfig
    from dynfuzz.campaign.journal import read_journal

    out = tmp_path / "out"
    config = CampaignConfig(budget=400.0, out=out, families=("basic",), workers=0, max_cases=1,
                            progress=False, minimize_budget=5.0, spec=CompileSpec(backend="eager"))
    Campaign(config).run()
    drains = [fact["grace"] for fact in read_journal(out) if fact["fact"] == "drain"]
    assert drains and drains[0] > 300, drains
