"""`releases check --record`: what the matrix says about known issues, written into `known_issues.toml`.

For each entry whose own repro (its first `corpus` path) was checked: every release tried where it
`reproduces` is added to the entry's `torch` list (its key on that release, when another, is added to its
`aliases`: the same fault keyed another way there), every release where it passes or fails differently is
taken off the list, and `fixed_in` is set to the release it is fixed in (removed when the verdict is no longer
a fix). Releases not tried are left as they were. No hand edit, so the file says on which releases a key can
be trusted (Note [Known issues on an unlisted release]).
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from dynfuzz.releases.installer import version_key
from dynfuzz.triage.known import KnownIssues, keys_of, releases_of, repros_of


def record(known: KnownIssues, rows: list[dict[str, Any]]) -> list[str]:
    """Apply the matrix rows (`Row.as_json()`) to `known`'s entries; returns one line per entry changed."""
    by_path = {Path(r["repro"]).resolve(): r for r in rows}
    changes = []
    for item in known.issues:
        own = next(iter(repros_of(item)), None)
        row = by_path.get(known.entry_path(own).resolve()) if own else None
        if row is None:
            continue
        before = (list(releases_of(item)), list(item.get("aliases") or []), item.get("fixed_in"))
        versions = releases_of(item)
        for rel, cell in row["releases"].items():
            if cell["outcome"] == "reproduces":
                versions.add(rel)
                if cell.get("key") and cell["key"] not in keys_of(item):
                    item["aliases"] = [*(item.get("aliases") or []), cell["key"]]
            elif cell["outcome"] in ("passes", "differs"):
                versions.discard(rel)
        if not versions:  # an empty list would match on every release: keep what was there
            versions = set(before[0])
        item["torch"] = sorted(versions, key=version_key)
        verdict = row.get("verdict", "")
        if verdict.startswith("fixed in "):
            item["fixed_in"] = verdict.removeprefix("fixed in ")
        else:
            item.pop("fixed_in", None)
        after = (item["torch"], list(item.get("aliases") or []), item.get("fixed_in"))
        if sorted(before[0], key=version_key) != after[0] or before[1:] != after[1:]:
            changes.append(f"{own}: torch {', '.join(after[0]) or '(none)'}"
                           + (f", fixed in {after[2]}" if after[2] else ""))
    return changes
