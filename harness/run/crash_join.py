"""A crash's identity is cheap: findings of a crash triage already named are filed without triaging them again.

Note [A crash's identity is cheap]
An explained crash is keyed by its exception type and the innermost torch frames outside wrappers
(`run/torch_frames.crash_frames`, Note [A key names what Dynamo did] in triage/explain.py). Those frames are read
in the worker from the live exception and travel on the finding (`Finding.crash_frames`), so the identity triage
would compute is known before any triage job runs. On a torch with many bugs the same crash is found hundreds of
times through other program text; each of those was a suspect waiting minutes for its own minimization, and the
queue never drained (issue: distinct bugs per hour).

The rule is learned, not predicted: when a triaged crash's explained key is made of exactly the frames and
exception type its own unminimized finding carried (minimization did not move the crash, no setting was needed,
the class did not change), its crash identity is bound to where triage put it:
- to its bucket, once that bucket's repro reproduces (`ok`): a later finding with the same crash identity joins
  that bucket at once as a member (verdict `joined`), its program kept as an example, and is never queued;
- to a known issue, when its explained key is one: a later finding with that crash identity counts as known.
A crash identity with no frame (a RecursionError, a crash only in wrappers) is never bound. Everything else
(silent divergences, refusals, crashes not yet bound) waits for its own triage as before. The bindings are
rebuilt by replaying the journal's triage results in order, so `--resume` and `dynfuzz triage` agree.
"""
from __future__ import annotations

from typing import Any

from dynfuzz.triage.buckets import tier_of

JOINED = "joined"  # a member's verdict: filed by its crash identity, its own triage never ran


def crash_identity(finding: Any, cls: str, error: str | None) -> str | None:
    """`<class> <exception type> in <frames> @<layer>` of a crash finding that carries its frames; else None."""
    frames = getattr(finding, "crash_frames", ())
    if not frames or tier_of(cls) != "crash" or not error:
        return None
    return f"{cls} {_mechanism(error, frames)} @{finding.layer or ''}"


def _mechanism(error: str, frames: tuple[str, ...]) -> str:
    return f"{error.split(' ', 1)[0]} in {' < '.join(frames)}"


class CrashJoins:
    """Crash identities bound to the bucket or known issue their triage found."""

    def __init__(self) -> None:
        self.buckets: dict[str, str] = {}  # crash identity -> bucket key
        self.known: dict[str, str] = {}  # crash identity -> known-issue key
        self.joined = 0  # findings filed by their crash identity (no triage job)
        self.known_joined = 0  # findings counted known by their crash identity

    def learn(self, finding: Any, cls: str, error: str | None, explanation: Any, *, bucket: str | None = None,
              known: str | None = None) -> None:
        """Bind `finding`'s crash identity when its triage's `explanation` names exactly its own frames."""
        ident = crash_identity(finding, cls, error)
        if ident is None or explanation.cls != cls or explanation.mechanism != _mechanism(error or "",
                                                                                        finding.crash_frames):
            return
        if " under " in explanation.construct:  # a setting the crash needs: another program may lack it
            return
        if known is not None:
            self.known[ident] = known
        elif bucket is not None:
            self.buckets.setdefault(ident, bucket)

    def summary(self) -> dict[str, int]:
        return {"joined": self.joined, "known_joined": self.known_joined, "bound": len(self.buckets) + len(self.known)}
