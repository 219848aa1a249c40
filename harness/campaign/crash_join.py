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
Until the first crash of an identity comes back from triage (its leader), later crashes of that identity are
its followers: each is a suspect whose job is written to `queue/` but not handed to the lanes. When the leader's
result binds the identity, the followers are filed by it; when it does not (the crash moved, the repro did not
reproduce), they are handed to the lanes then. On torch 2.5.1, 73 of a campaign's 84 waiting crash jobs had
frames, in 22 identities: the lanes see about one job per identity instead.
An exception the program itself raised on what the compiled frame handed it has no frames of torch to name it;
its type and the shape of its message are its identity in the same way (`Finding.raised`, Note [An error the
program raised is not torch's] in oracles/exceptions.py). On 2.5.1 such exceptions were 9 of a 20-minute run's 11
bug buckets left unminimized: suspects of a fault already minimized, waiting behind it for their own jobs.
A crash whose cheap key is not made of its frames or of such a message (a RecursionError, a typed graph
break, an exception the traced code raised) has no crash identity: it never follows and is never bound. Everything else
(silent divergences, refusals, crashes not yet bound) waits for its own triage as before. The bindings are
rebuilt by replaying the journal's triage results in order, so `--resume` and `dynfuzz triage` agree.
"""
from __future__ import annotations

from typing import Any

from dynfuzz.triage.explain import CRASH_CONSTRUCT, PROGRAM_CONSTRUCT, Explanation

JOINED = "joined"  # a member's verdict: filed by its crash identity, its own triage never ran


def crash_identity(cheap: Explanation | None) -> str | None:
    """A crash's identity: its cheap key when that key is made of its frames (`explain.cheap_explanation`: the
    type and frames its explained key will name, and its layer); None for any other finding."""
    named = cheap is not None and cheap.construct in (CRASH_CONSTRUCT, PROGRAM_CONSTRUCT)
    return cheap.key if named and not cheap.ablated else None


class CrashJoins:
    """Crash identities bound to the bucket or known issue their triage found."""

    def __init__(self) -> None:
        self.buckets: dict[str, str] = {}  # crash identity -> bucket key
        self.known: dict[str, str] = {}  # crash identity -> known-issue key
        self.leaders: dict[str, str] = {}  # crash identity -> the finding identity whose triage is awaited
        self.followers: dict[str, list[tuple[str, int, dict]]] = {}  # crash identity -> (identity, priority, meta)
        self.joined = 0  # findings filed by their crash identity (no triage job)
        self.known_joined = 0  # findings counted known by their crash identity

    def learn(self, cheap: Explanation | None, explanation: Any, *, bucket: str | None = None,
              known: str | None = None) -> None:
        """Bind the crash identity of a finding (`cheap`: its cheap explanation) when its triage's `explanation`
        names exactly its own type and frames, in the same class and with no setting it needs."""
        ident = crash_identity(cheap)
        if ident is None or explanation.cls != cheap.cls or explanation.mechanism != cheap.error:
            return
        if " under " in explanation.construct:  # a setting the crash needs: another program may lack it
            return
        if known is not None:
            self.known[ident] = known
        elif bucket is not None:
            self.buckets.setdefault(ident, bucket)

    def lead_or_follow(self, crash: str | None, ident: str, priority: int, meta: dict) -> bool:
        """Make `ident` the leader of `crash` when it has none (False: queue it), else park it behind the leader
        (True: its job is written, not handed to the lanes)."""
        if crash is None:
            return False
        if crash not in self.leaders:
            self.leaders[crash] = ident
            return False
        self.followers.setdefault(crash, []).append((ident, priority, meta))
        return True

    def resolved(self, ident: str) -> tuple[str | None, list[tuple[str, int, dict]]]:
        """The crash identity `ident` led (None when it led none) and its followers, now released."""
        crash = next((c for c, leader in self.leaders.items() if leader == ident), None)
        if crash is None:
            return None, []
        del self.leaders[crash]
        return crash, self.followers.pop(crash, [])

    def summary(self) -> dict[str, int]:
        return {"joined": self.joined, "known_joined": self.known_joined, "bound": len(self.buckets) + len(self.known),
                "following": sum(len(f) for f in self.followers.values())}
