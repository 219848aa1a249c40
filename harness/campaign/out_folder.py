"""A campaign's `--out` folder: claimed by one campaign at a time, never an earlier campaign's by accident.

What Note [A run only changes folders it created] (triage/filing.py) says holds inside the folder; this module
holds it at its door: `fuzz` refuses an `--out` that holds an earlier campaign unless it is resumed (`--resume`) or
`--overwrite` says to empty it first, and a lock file keeps a second campaign out while one runs. `dynfuzz
triage` and `dynfuzz releases` update a campaign folder by design and take the same lock.
"""
from __future__ import annotations

import fcntl
import os
import shutil
from pathlib import Path
from typing import IO

from dynfuzz.errors import UsageError

LOCK = ".dynfuzz.lock"
CAMPAIGN_MARKS = ("summary.json", "findings", "queue")


def holds_campaign(out: Path) -> bool:
    """Whether `out` holds results of an earlier campaign (a summary, bucket folders or a triage queue)."""
    for name in CAMPAIGN_MARKS:
        path = out / name
        if path.is_file() or (path.is_dir() and any(path.iterdir())):
            return True
    return False


def is_campaign_folder(out: Path) -> bool:
    """Whether `out` is a campaign's folder: it holds a journal, or an earlier layout's summary.json."""
    from dynfuzz.campaign.journal import JOURNAL

    return (out / JOURNAL).is_file() or (out / "summary.json").is_file()


def claim(out: Path, resume: bool = False, overwrite: bool = False, verb: str = "fuzz") -> IO:
    """Lock `out` for this process (released when the returned file is closed or the process ends); refuse an
    earlier campaign's folder unless `resume` or `overwrite`, which empties it first, and only a folder that is a
    campaign's (`is_campaign_folder`): anything else that is not empty is refused, never deleted."""
    if overwrite and out.is_dir() and any(c.name != LOCK for c in out.iterdir()) and not is_campaign_folder(out):
        raise UsageError(f"--overwrite {out}: not a dynfuzz campaign folder (no journal.jsonl or summary.json); "
                         f"refusing to empty it")
    out.mkdir(parents=True, exist_ok=True)
    handle = open(out / LOCK, "a+")
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        handle.close()
        raise UsageError(f"{out} is in use by another dynfuzz campaign (lock {out / LOCK})") from None
    if overwrite:
        for child in out.iterdir():
            if child.name == LOCK:
                continue
            shutil.rmtree(child) if child.is_dir() and not child.is_symlink() else child.unlink()
    elif not resume and holds_campaign(out):
        handle.close()
        raise UsageError(f"--out {out} holds an earlier campaign: continue it with --resume {out}, or pass "
                         f"--overwrite to empty it first")
    handle.truncate(0)
    handle.write(f"{os.getpid()} {verb}\n")
    handle.flush()
    return handle
