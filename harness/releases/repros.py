"""The repros a `dynfuzz releases check` is given: corpus files and folders, bucket folders, campaign folders.

A repro is a standalone script that exits 1 while its bug is present and 0 once fixed. One with metadata
(every corpus entry and bucket `repro.py`: a `repro.json` beside it, or an older `DYNFUZZ` block) and any
file that follows the program convention (an entry function and `inputs`, what `dynfuzz check` accepts) is
judged by `dynfuzz.releases.probe` with the oracles, which can also say how it fails; only a script that is
not a program is run as it is and judged by its exit status. A corpus folder's seed
scenarios (`status: passing`) are not bugs and are left out; a campaign folder contributes every bucket that
has a repro, and is written back to afterwards (`campaign_folder`).
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dynfuzz.errors import UsageError


@dataclass
class Repro:
    """One repro to run on every release, and where it came from."""

    path: Path
    name: str
    meta: dict[str, Any] = field(default_factory=dict)
    campaign: Path | None = None  # the campaign folder it is a bucket of
    bucket: dict[str, Any] | None = None  # its summary.json row
    program: bool = False  # it follows the program convention (an entry function and `inputs`)

    def __post_init__(self) -> None:
        if not self.meta and not self.program:
            self.program = is_program(self.path)

    @property
    def judged(self) -> bool:
        """Judged by the probe (it has metadata, or is a program), else run as a plain script."""
        return bool(self.meta) or self.program

    @property
    def signature(self) -> str | None:
        return self.meta.get("signature")

    @property
    def key(self) -> str | None:
        return (self.bucket or {}).get("key") or self.meta.get("bucket")


@dataclass
class Found:
    repros: list[Repro]
    campaigns: list[Path]
    seeds_left_out: int = 0


def is_program(path: Path) -> bool:
    """Whether the file follows the program convention (`read_program` accepts it, as `dynfuzz check` does)."""
    from dynfuzz.triage.repro import read_program

    try:
        read_program(path)
    except UsageError:
        return False
    return True


def read_meta(path: Path) -> dict[str, Any]:
    from dynfuzz.report.data import repro_meta

    try:
        return repro_meta(path.read_text(), path)
    except (OSError, UnicodeDecodeError) as e:
        raise UsageError(f"cannot read {path}: {e}") from None


def _campaign(folder: Path) -> list[Repro]:
    from dynfuzz.report.data import resolve_path

    try:
        summary = json.loads((folder / "summary.json").read_text())
    except (OSError, ValueError) as e:
        raise UsageError(f"{folder}/summary.json: not a campaign summary ({e})") from None
    out = []
    for row in summary.get("buckets", []):
        repro = resolve_path(folder, row.get("repro"))
        if repro is None or not repro.is_file():
            continue
        out.append(Repro(repro, repro.parent.name, read_meta(repro), folder, row))
    return out


def discover(paths: list[str]) -> Found:
    """The repros under `paths`; a path that is none of the accepted kinds is a one-line `UsageError`."""
    from dynfuzz.triage.corpus_replay import is_corpus_file

    found = Found([], [])
    for raw in paths:
        p = Path(raw)
        if not p.exists():
            raise UsageError(f"no such file or folder: {raw}")
        if p.is_dir() and (p / "summary.json").is_file():
            found.campaigns.append(p)
            found.repros.extend(_campaign(p))
        elif p.is_dir() and (p / "repro.py").is_file():
            found.repros.append(Repro(p / "repro.py", p.name, read_meta(p / "repro.py")))
        elif p.is_dir():
            entries = [q for q in sorted(p.rglob("*.py")) if is_corpus_file(q)]
            if not entries:
                raise UsageError(f"{raw}: not a repro, a bucket folder (repro.py), a campaign folder (summary.json) "
                                 "or a folder of corpus entries")
            for q in entries:
                meta = read_meta(q)
                if meta.get("status") == "passing":
                    found.seeds_left_out += 1
                else:
                    found.repros.append(Repro(q, q.stem, meta))
        elif p.suffix == ".py":
            found.repros.append(Repro(p, p.stem, read_meta(p)))
        else:
            raise UsageError(f"{raw}: not a repro (.py), a bucket folder or a campaign folder")
    return found
