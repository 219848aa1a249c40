"""dynfuzz's own error types: bad input from the user, and cases the harness could not judge.

`UsageError` is the one error the CLI turns into a one-line message and exit code 2. `CaseError` and its
subclasses mark a case that failed for a reason that is not torch's (the generated program is invalid, a
snapshot or an oracle broke): a campaign files them under `OUT/harness-errors/`, counts them in
`summary.json` `harness_errors`, and never reports them as torch findings.
"""


class UsageError(Exception):
    """Bad input from the user: a flag, a file, a budget. Its message is printed as one line."""


class CaseError(Exception):
    """A case the harness could not judge; `kind` names the stage that failed (see `HARNESS_ERROR_KINDS`)."""

    kind = "internal"


class InvalidCase(CaseError):
    """The program itself is unusable: its `inputs()` raised, so there is nothing to compare."""

    kind = "invalid-case"


class SnapshotError(CaseError):
    """Snapshotting the program-visible state raised: a gap in dynfuzz's snapshot, not a torch bug."""

    kind = "snapshot"


HARNESS_ERROR_KINDS = {
    "generator": "drawing the program raised (a generator bug; the seed redraws it)",
    "invalid-case": "the generated program is unusable (its inputs() raised)",
    "snapshot": "snapshotting program state raised",
    "oracle": "an oracle raised while judging the case",
    "memory-limit": "the case reached the worker's --worker-memory limit",
    "worker-lost": "a worker died running the case, but the case did not crash a fresh worker again",
    "internal": "any other error inside dynfuzz",
}
