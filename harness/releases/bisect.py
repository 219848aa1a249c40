"""`releases check --bisect`: narrow a regression or a fix to two adjacent installable releases.

Between the release that decided the other way and the first release of the verdict, every release the
package index lists is a candidate, not only the ones given with `--torch`. A binary search installs (or
reuses) one environment per step, so N candidates cost about log2(N) installs. A candidate that cannot be
installed, or where the repro is `n/a` or an `error`, is dropped and the search goes on without it; a pass is
confirmed like the matrix's deciding passes. The search assumes one transition in the range; the releases it
tried are recorded with their outcomes so a second transition shows.
"""
from __future__ import annotations

from typing import Any

from dynfuzz.errors import UsageError
from dynfuzz.releases.environments import EnvStore
from dynfuzz.releases.installer import version_key
from dynfuzz.releases.matrix import DECIDED, FAILING, Cell, Row, Runner, Verdict, confirmed, run_once


def candidates(available: list[str], low: str, high: str, skip: set[str] | frozenset[str] = frozenset()) -> list[str]:
    """Releases strictly between `low` and `high`, oldest first, less `skip`."""
    lo, hi = version_key(low), version_key(high)
    return sorted((r for r in set(available) if lo < version_key(r) < hi and r not in skip), key=version_key)


def narrow(row: Row, store: EnvStore, available: list[str], confirm: int = 3, runner: Runner = run_once,
           log=print) -> dict[str, Any] | None:
    """Bisect `row`'s regression or fix over `available`; updates its verdict and returns the record."""
    v = row.verdict
    if v.kind not in ("regression", "fixed") or v.previous is None or v.release is None:
        return None
    low, high = v.previous, v.release
    left = candidates(available, low, high, set(row.cells))
    tried: dict[str, str] = {}
    # For a regression the `high` side fails; for a fix it passes.
    high_fails = v.kind == "regression"
    while left:
        mid = left[len(left) // 2]
        cell = _try(row, mid, store, confirm, runner, log)
        tried[mid] = cell.outcome if cell is not None else "cannot be installed"
        i = left.index(mid)
        if cell is None or cell.outcome not in DECIDED:
            left.pop(i)
            continue
        if (cell.outcome in FAILING) == high_fails:
            high, left = mid, left[:i]
        else:
            low, left = mid, left[i + 1:]
    row.verdict = Verdict(v.kind, high, v.deciding, low)
    row.bisect = {"between": [low, high], "tried": tried}
    return row.bisect


def _try(row: Row, release: str, store: EnvStore, confirm: int, runner: Runner, log) -> Cell | None:
    try:
        env = store.get(release)
    except UsageError as e:
        log(f"releases: bisect: skipping torch {release}: {e}")
        return None
    try:
        cell = runner(row.repro, env.python)
        if cell.outcome == "passes" and confirm > 0:
            cell = confirmed(cell, [runner(row.repro, env.python) for _ in range(confirm)])
    finally:
        store.release(release)
    log(f"releases: bisect {row.repro.name}: torch {release}: {cell.outcome}")
    return cell
