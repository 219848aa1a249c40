"""A release matrix written back into the campaign folder its buckets came from.

- each bucket's `report.md` gets a "Torch releases" section (replaced, not repeated, by a later check), and
  its "Fails on releases" line under the title is filled in;
- `summary.json`: `buckets[].releases` (per release: `outcome`, `key`), `buckets[].release_verdict`, and
  `buckets[].fixed_in` when the newest release tried passes; a top-level `releases` block (the releases
  tried, their build tags, how many buckets are fixed); `bugs` recounted with `row_is_bug`, which keeps a
  bucket with `fixed_in` out (it is listed apart: a user of an older release still needs it);
- the campaign's report (`report.html`, `report.md`) is rendered again, showing the matrix per bucket.

`check_bucket` does it for one bucket on the release environments already installed (none is built): what
`dynfuzz report DIR --bucket ID --issue` runs before it prints the issue body, so the releases line is filled.
"""
from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from dynfuzz.campaign.journal import Journal, has_journal
from dynfuzz.campaign.journal_views import rebuild
from dynfuzz.campaign.out_folder import claim
from dynfuzz.releases.installer import version_key
from dynfuzz.releases.matrix import Row
from dynfuzz.report import write_report
from dynfuzz.report.data import resolve_path
from dynfuzz.triage.buckets import row_is_bug
from dynfuzz.triage.issue import RELEASES_END, RELEASES_START, with_releases, with_section


def section(row: Row, builds: dict[str, str]) -> str:
    """The bucket report's "Torch releases" section: the verdict and one line per release."""
    note = ""
    if row.bisect:
        low, high = row.bisect["between"]
        note = f" (bisected: passes on {low}, fails on {high})" if row.verdict.kind == "regression" \
            else f" (bisected: fails on {low}, passes on {high})"
    lines = [RELEASES_START, "### Torch releases", "", f"Verdict: **{row.verdict.text}**{note}", "",
             "| release | build | outcome | key |", "|---|---|---|---|"]
    for rel in sorted(row.cells, key=version_key):
        cell = row.cells[rel]
        outcome = cell.outcome + (f" ({cell.detail})" if cell.detail else "")
        key = f"`{cell.key}`" if cell.key else "-"
        lines.append(f"| {rel} | {builds.get(rel, '?')} | {outcome.replace('|', '/')} | {key.replace('|', '/')} |")
    lines += ["", "From `dynfuzz releases check` (docs/releases.md): each release ran the repro in a fresh process.",
              RELEASES_END]
    return "\n".join(lines)


def write_back(campaign: Path, rows: list[Row], builds: dict[str, str]) -> dict[str, Any]:
    """Write the matrix of `campaign`'s buckets into it (module docstring), under the folder's lock; returns the
    new summary. A journaled campaign gets a `release` fact, and its views are made again from the journal."""
    lock = claim(campaign, resume=True, verb="releases check")
    try:
        summary = _journal_back(campaign, rows, builds) if has_journal(campaign) \
            else _summary_back(campaign, rows, builds)
    finally:
        lock.close()
    write_report([campaign])
    return summary


def _verdict(row: Row, builds: dict[str, str]) -> dict[str, Any]:
    """A bucket's release fields (and the ones a new verdict drops), and its report.md section."""
    fields: dict[str, Any] = {"releases": {rel: row.cells[rel].as_json() for rel in sorted(row.cells, key=version_key)},
                              "release_verdict": row.verdict.text}
    if row.bisect is not None:
        fields["bisect"] = row.bisect
    dropped = []
    if row.verdict.kind == "fixed":
        fields["fixed_in"] = row.verdict.release
    else:
        dropped.append("fixed_in")
    return {"fields": fields, "dropped": dropped, "section": section(row, builds)}


def _journal_back(campaign: Path, rows: list[Row], builds: dict[str, str]) -> dict[str, Any]:
    current = json.loads((campaign / "summary.json").read_text()) if (campaign / "summary.json").is_file() else {}
    mine = {_ident(row.repro.bucket): row for row in rows if row.repro.campaign == campaign and row.repro.bucket}
    verdicts = {b["key"]: _verdict(mine[_ident(b)], builds) for b in current.get("buckets", []) if _ident(b) in mine}
    tried = sorted(builds, key=version_key)
    fixed = sum(1 for b in current.get("buckets", [])
                if (verdicts[b["key"]]["fields"].get("fixed_in") if b["key"] in verdicts else b.get("fixed_in")))
    journal = Journal(campaign)
    journal.append("release", buckets=verdicts,
                   block={"tried": tried, "builds": {r: builds[r] for r in tried}, "fixed": fixed})
    journal.close()
    return rebuild(campaign, report=False)


def _summary_back(campaign: Path, rows: list[Row], builds: dict[str, str]) -> dict[str, Any]:
    """An earlier layout (no journal): summary.json and report.md edited in place."""
    path = campaign / "summary.json"
    summary = json.loads(path.read_text())
    mine = {_ident(row.repro.bucket): row for row in rows if row.repro.campaign == campaign and row.repro.bucket}
    tried = sorted(builds, key=version_key)
    for bucket in summary.get("buckets", []):
        row = mine.get(_ident(bucket))
        if row is None:
            continue
        bucket["releases"] = {rel: row.cells[rel].as_json() for rel in sorted(row.cells, key=version_key)}
        bucket["release_verdict"] = row.verdict.text
        if row.bisect is not None:
            bucket["bisect"] = row.bisect
        if row.verdict.kind == "fixed":
            bucket["fixed_in"] = row.verdict.release
        else:
            bucket.pop("fixed_in", None)
        folder = resolve_path(campaign, bucket.get("folder"))
        report = folder / "report.md" if folder is not None else None
        if report is not None and report.parent.is_dir():
            old = report.read_text() if report.exists() else ""
            report.write_text(with_releases(with_section(old, section(row, builds)), bucket["releases"],
                                            row.verdict.text))
    buckets = summary.get("buckets", [])
    summary["releases"] = {"tried": tried, "builds": {r: builds[r] for r in tried},
                           "fixed": sum(1 for b in buckets if b.get("fixed_in"))}
    summary["bugs"] = sum(1 for b in buckets if row_is_bug(b))
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(summary, indent=2) + "\n")
    tmp.replace(path)
    return summary


def _ident(bucket: dict[str, Any] | None) -> str:
    bucket = bucket or {}
    return str(bucket.get("id") or bucket.get("key") or bucket.get("folder"))


def check_bucket(campaign: Path, row: dict[str, Any], log: Callable[[str], None]) -> bool:
    """Run bucket `row`'s repro on every release environment installed in the dynfuzz cache and write the
    verdicts back into `campaign`; False when none is installed or the bucket has no repro."""
    from dynfuzz.releases.environments import EnvStore
    from dynfuzz.releases.matrix import run_matrix
    from dynfuzz.releases.repros import Repro, read_meta
    from dynfuzz.report.data import resolve_path

    repro = resolve_path(campaign, row.get("repro"))
    if repro is None or not repro.is_file():
        return False
    with EnvStore(log=log, progress=lambda line: None) as store:
        envs = {rel: env for rel, env in store.listing() if env is not None}
        if not envs:
            return False
        log(f"releases: {repro.parent.name} on {', '.join(envs)} (installed release environments)")
        rows = run_matrix([Repro(repro, repro.parent.name, read_meta(repro), campaign, row)], envs, jobs=2)
    write_back(campaign, rows, {rel: env.torch for rel, env in envs.items()})
    return True
