"""Known issues verified on a release their entry does not list (Note [Known issues on an unlisted release]).

`ReproVerifier` is the `KnownIssues.verifier` a campaign and the gate install: it runs an entry's repros with
the running interpreter, each in a fresh process (`dynfuzz.releases.probe`, as `releases check` does), and
returns the keys they produce; none means FIXED on that release, which it says on stderr. Results are cached
under `<cache>/known-verified/<release>/`, one file per entry and the text of its repros, so a second campaign
on the same release verifies nothing again.

Note [Known issues are verified beside the campaign]
A campaign does not wait for verification: `prefetch` starts one background thread that verifies every entry
the running release is not listed in, one repro at a time at a lowered priority, while cases run. A match that
needs an entry before the thread reached it verifies that entry at once (or waits for the repro already
running), so the answer is the same, only sooner; the budget is
the campaign's budget, verification included.
"""
from __future__ import annotations

import hashlib
import json
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from dynfuzz.releases.matrix import FAILING, run_once
from dynfuzz.releases.repros import Repro, read_meta
from dynfuzz.triage.known import release, releases_of, repros_of


def _digest(item: dict, paths: list[Path]) -> str:
    h = hashlib.sha256((item.get("key") or "").encode())
    for p in paths:
        h.update(b"\0" + p.name.encode() + b"\0")
        try:
            h.update(p.read_bytes())
        except OSError:
            h.update(b"(missing)")
    return h.hexdigest()[:20]


class ReproVerifier:
    """Runs known-issue repros on this interpreter's torch, with a cache per (entry, release)."""

    def __init__(self, cache: Path | None = None, python: str | None = None, jobs: int = 2,
                 timeout: float = 600.0, log=None) -> None:
        from dynfuzz.paths import cache_dir

        self.cache = (cache if cache is not None else cache_dir()) / "known-verified"
        self.python = python or sys.executable
        self.jobs, self.timeout = jobs, timeout
        self.log = log or (lambda line: print(line, file=sys.stderr, flush=True))
        self.ran = 0  # repros run (not answered from the cache)
        self._locks: dict[Path, threading.Lock] = {}
        self._guard = threading.Lock()
        self.background: threading.Thread | None = None

    def _lock(self, path: Path) -> threading.Lock:
        with self._guard:
            return self._locks.setdefault(path, threading.Lock())

    def prefetch(self, entries: list[tuple[dict, list[Path]]], release: str, nice: int = 10) -> None:
        """Verify `entries` on `release` in a background thread, one at a time at priority `nice`, into the
        cache `keys` answers from (a daemon: a campaign that ends first leaves the rest for next time)."""
        def run() -> None:
            for item, paths in entries:
                self.keys(item, paths, release, nice=nice)

        if entries:
            self.background = threading.Thread(target=run, name="dynfuzz-known-verifier", daemon=True)
            self.background.start()

    def __call__(self, entries: list[tuple[dict, list[Path]]], release: str) -> list[list[str] | None]:
        with ThreadPoolExecutor(max(1, self.jobs)) as pool:
            return list(pool.map(lambda e: self.keys(e[0], e[1], release), entries))

    def keys(self, item: dict, paths: list[Path], release: str, nice: int = 0) -> list[str] | None:
        """The keys `item`'s repros produce on `release` (cached); [] when every one agrees (FIXED there), None
        when none could be judged there (an error, an API the release lacks: neither known nor fixed). One entry
        is verified by one thread at a time: another asking for it waits, then reads the cache."""
        path = self.cache / release / f"{_digest(item, paths)}.json"
        with self._lock(path):
            return self._keys(item, paths, release, path, nice)

    def _keys(self, item: dict, paths: list[Path], release: str, path: Path, nice: int) -> list[str] | None:
        try:
            return list(json.loads(path.read_text())["keys"])
        except (OSError, ValueError, KeyError):
            pass
        keys: list[str] = []
        outcomes = []
        for repro in paths:
            if not repro.is_file():
                continue
            self.ran += 1
            cell = run_once(Repro(repro, repro.stem, read_meta(repro)), self.python, self.timeout, nice)
            outcomes.append(cell.outcome)
            if cell.outcome in FAILING and cell.key and cell.key not in keys:
                keys.append(cell.key)
        name = next(iter(paths), Path(str(item.get("key")))).name
        if keys:
            self.log(f"dynfuzz: known issue {name} verified on torch {release}: still diverges")
        elif "passes" not in outcomes:
            self.log(f"dynfuzz: known issue {name} could not be verified on torch {release} "
                     f"({', '.join(outcomes) or 'no repro'}): not counted as known on this release")
            return None
        else:
            self.log(f"dynfuzz: known issue {name}: FIXED on {release} (its repro no longer diverges): not "
                     "counted as known on this release")
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_suffix(".tmp")
            tmp.write_text(json.dumps({"key": item.get("key"), "keys": keys, "checked": time.time()}) + "\n")
            tmp.replace(path)
        except OSError:
            pass  # an unwritable cache costs a second verification next time, nothing else
        return keys


def verifying(known, prefetch: bool = True):
    """`known` with a `ReproVerifier` installed (what `dynfuzz fuzz` and `dynfuzz gate` run with), verifying in
    the background, with `prefetch`, the entries that do not list the running torch's release."""
    if known.verifier is None:
        known.verifier = ReproVerifier()
        if prefetch:
            rel = release(_running_torch())
            known.verifier.prefetch(unlisted(known, rel), rel)
    return known


def unlisted(known, rel: str) -> list[tuple[dict, list[Path]]]:
    """The entries of `known` that list releases other than `rel`, with their repro paths."""
    return [(item, [known.entry_path(c) for c in repros_of(item)]) for item in known.issues
            if releases_of(item) and rel not in releases_of(item)]


def _running_torch() -> str:
    from importlib.metadata import version

    return version("torch")
