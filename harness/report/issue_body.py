"""`dynfuzz report DIR --bucket ID --issue`: one bucket's issue body, ready to paste into a PyTorch issue.

The body is the bucket's `report.md` (written at filing: the facts under the title, then the plain repro in
its first ```python block), with its releases line brought up to date from `summary.json` (a `dynfuzz
releases check` run after filing). A report.md from before the facts lines existed gets them from the
bucket's summary row.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from dynfuzz.errors import UsageError


def find_bucket(folder: Path, ident: str) -> dict[str, Any]:
    """The `summary.json` row of the bucket `ident` (its id, its key, or its folder name)."""
    try:
        summary = json.loads((folder / "summary.json").read_text())
    except (OSError, ValueError) as e:
        raise UsageError(f"{folder}/summary.json: not a campaign summary ({e})") from None
    rows = summary.get("buckets", [])
    for row in rows:
        if ident in (row.get("id"), row.get("key"), Path(str(row.get("folder") or "")).name):
            return row
    ids = ", ".join(str(r.get("id")) for r in rows[:10]) or "none"
    raise UsageError(f"{folder}: no bucket {ident!r} (its buckets: {ids})")


def issue_body(folder: Path, ident: str) -> str:
    """The issue body of bucket `ident` of the campaign in `folder` (module docstring)."""
    from dynfuzz.report.data import resolve_path
    from dynfuzz.triage.issue import RELEASES_LINE, component, releases_text, with_releases

    row = find_bucket(folder, ident)
    bucket_dir = resolve_path(folder, row.get("folder"))
    report = bucket_dir / "report.md" if bucket_dir is not None else None
    if report is None or not report.is_file():
        raise UsageError(f"{folder}: bucket {ident!r} has no report.md")
    text = report.read_text()
    releases, verdict = row.get("releases"), row.get("release_verdict", "")
    if RELEASES_LINE in text:
        return with_releases(text, releases, verdict)
    tier = str(row.get("tier") or "-")
    name, labels = component(tier, row.get("layer"))
    facts = [f"- **Tier:** {tier}", f"- **Component:** `{name}`",
             "- **Suggested labels:** " + ", ".join(f"`{label}`" for label in labels),
             RELEASES_LINE + releases_text(releases, verdict)]
    title, _, rest = text.partition("\n")
    return f"{title}\n\n" + "\n".join(facts) + "\n" + rest
