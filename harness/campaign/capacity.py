"""How a campaign shares its processes and its end with triage: workers lent to triage while findings wait
(`Capacity`, Note [Capacity follows the queue]) and how long the triage drain may delay the end
(`triage_grace`, `drain_grace`)."""
from __future__ import annotations


def triage_grace(budget: float) -> float:
    """How long minimization may delay the end of a campaign: 10% of its budget, between 10 s and 60 s.

    A one-hour soak ends at most 70 s late and a one-minute CI run 20 s late; buckets still queued
    then stay under their cheap key, `unminimized`."""
    return min(60.0, max(10.0, 0.1 * budget))


def drain_grace(budget: float, configured: float | None, left: float, ended_by_cases: bool) -> float:
    """How long the triage drain at the end may take: the configured grace, else `triage_grace(budget)`; a run
    that ended because its `--cases` were done (not stopped, not out of time) may also use the `left` seconds of
    its budget, so a short `--cases` run with a long `--budget` finishes its triage instead of leaving its
    buckets unminimized (a 500-case run on 2.13 stopped at 238 s of 900 with 9 of 10 bug buckets unminimized)."""
    grace = configured if configured is not None else triage_grace(budget)
    return max(grace, left) if ended_by_cases else grace


# Note [Capacity follows the queue]
# A campaign has `--workers` processes for cases and one triage lane per three workers beside them. When
# findings wait for triage (new cheap keys and suspects; localizations never count), workers are lent to
# triage: a worker whose case is done takes no new case while it is lent, and the triage pool gets one more
# lane. What is lent is bounded by an allowance of TRIAGE_SHARE of the workers' time so far, so generation
# keeps at least about 1 - TRIAGE_SHARE of its cases whatever the queue. The budget is the budget: once the
# bug jobs waiting (a miscompile's or a crash's; refusals wait for idle lanes) would not drain in the time left
# on every process (workers and lanes together), the campaign stops drawing and triages on every worker,
# whatever the allowance. On a torch with many bugs that is well before the end: a 2.5.1 run that kept drawing
# to its last second left 88 of its 144 bug buckets unminimized, under their cheap keys, and a bucket minimized
# is worth more than one more cheap key found in the last minutes. Workers come back as soon as the queue
# would drain again.
TRIAGE_SHARE = 0.25


class Capacity:
    """How many case workers are lent to triage (see Note [Capacity follows the queue])."""

    def __init__(self, workers: int, share: float = TRIAGE_SHARE, lanes: int = 1) -> None:
        self.workers, self.share, self.lanes = workers, share, lanes
        self.used = 0.0  # worker-seconds lent so far
        self.lent = 0
        self.last: float | None = None

    def converted(self, elapsed: float, remaining: float, waiting: int, job_seconds: float,
                  open_for_new: bool, bugs_waiting: int | None = None) -> int:
        """Workers to lend now, given `waiting` urgent jobs of about `job_seconds` each, `bugs_waiting` of them
        a miscompile's or a crash's (all of them when not given): only those stop the drawing."""
        if self.last is not None:
            self.used += self.lent * max(0.0, elapsed - self.last)
        self.last = elapsed
        bugs = waiting if bugs_waiting is None else bugs_waiting
        if open_for_new and bugs and remaining * (self.workers + self.lanes) < bugs * job_seconds:
            self.lent = self.workers  # the queue would not drain in the time left: stop drawing
            return self.lent
        allowance = self.share * self.workers * elapsed - self.used
        if not open_for_new or waiting == 0 or allowance <= 0:
            self.lent = 0
            return 0
        cap = self.workers - 1 if self.workers > 1 else 0
        self.lent = min(cap, waiting, int(allowance // max(job_seconds, 1.0)) + 1)
        return self.lent
