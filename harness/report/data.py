"""What a report shows, read back from campaign folders: totals, time samples, buckets and their files.

A campaign folder holds `summary.json`, `samples.json` (time samples), `coverage.json` (when coverage
was measured) and `findings/`: either one folder per bucket (`<slug>-<id>/repro.py, report.md`) listed
in the summary's `buckets`, or, from older campaigns, one script per signature listed in
`unique_findings`. Both are read into the same `Row`s; several folders merge into one `Report`.
"""
from __future__ import annotations

import ast
import json
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dynfuzz.errors import UsageError
from dynfuzz.run.torch_compat import describe_patches
from dynfuzz.triage.buckets import TIER_ORDER, tier_of

SUMMED = ("cases", "findings", "unique", "bugs", "known", "crashes", "hangs", "eager_errors", "seconds",
          "torch_seconds")


@dataclass
class Row:
    """One bucket (or, for an older campaign, one signature) with what the report shows about it."""

    key: str  # the bucket key, or the signature when there are no buckets
    title: str
    oracle: str
    kind: str
    count: int
    layer: str | None = None
    status: str = ""
    first_seen: float | None = None  # seconds into its campaign
    tags: tuple[str, ...] = ()
    repro: str = ""  # the repro script's text
    repro_path: str | None = None
    report: str = ""  # the bug report's text (report.md), or the finding's details
    campaign: str = ""
    tier: str = ""  # miscompile, crash, refusal, performance (Note [Tiers: what counts as a bug])
    releases: dict[str, dict[str, Any]] = field(default_factory=dict)  # `dynfuzz releases check`: per release
    release_verdict: str = ""
    fixed_in: str | None = None  # passes on this newer release: listed apart, not a bug

    @property
    def release_line(self) -> str:
        """`2.5.1 passes, 2.13.0 reproduces: regression since 2.13.0`, or "" when no check ran."""
        if not self.releases:
            return ""
        cells = ", ".join(f"{r} {c.get('outcome', '?')}" for r, c in self.releases.items())
        return f"{cells}: {self.release_verdict}" if self.release_verdict else cells


@dataclass
class Campaign:
    """One campaign folder, read."""

    path: Path
    summary: dict[str, Any]
    samples: list[tuple[float, int, int]]
    rows: list[Row]
    coverage: dict[str, Any] | None = None


@dataclass
class Report:
    """One or several campaigns merged, and optionally the earlier campaign to compare with."""

    campaigns: list[Campaign]
    rows: list[Row] = field(default_factory=list)
    since: Campaign | None = None

    @property
    def totals(self) -> dict[str, Any]:
        totals: dict[str, Any] = {k: 0 for k in SUMMED}
        for c in self.campaigns:
            for k in SUMMED:
                totals[k] += c.summary.get(k, 0) or 0
        totals["buckets"] = len(self.rows)
        totals["cases_per_second"] = round(totals["cases"] / totals["seconds"], 3) if totals["seconds"] else 0.0
        totals["seconds"] = round(totals["seconds"], 1)
        totals["torch_seconds"] = round(totals["torch_seconds"], 1)
        first = self.campaigns[0].summary
        totals["torch"] = first.get("torch", "?")
        totals["configuration"] = describe(first)
        totals["patches"] = patches_line([c.summary for c in self.campaigns])
        return totals

    def counter(self, attr: str) -> Counter[str]:
        """Buckets per oracle, layer, ...: one count per bucket (not per occurrence)."""
        out: Counter[str] = Counter()
        for row in self.rows:
            values = getattr(row, attr)
            for v in (values if isinstance(values, tuple) else (values,)):
                out[v or "unknown"] += 1
        return out

    def features(self) -> Counter[str]:
        """Cases per feature tag, over all campaigns."""
        out: Counter[str] = Counter()
        for c in self.campaigns:
            out.update(c.summary.get("features", {}))
        return out


def describe(summary: dict[str, Any]) -> str:
    backends = summary.get("backends") or [summary.get("backend", "?")]
    parts = [f"backends {','.join(backends)}", f"device {summary.get('device', '?')}",
             f"seed {summary.get('seed', '?')}", f"{summary.get('workers', '?')} workers"]
    if summary.get("compiler", "torch") != "torch":
        parts.insert(0, f"compiler {summary['compiler']}")
    if summary.get("cross_device"):
        parts.append("cross-device")
    return ", ".join(parts)


def patches_line(summaries: list[dict[str, Any]]) -> str:
    """What dynfuzz changed in the torch under test, for the header: one line per distinct record (a merged
    report of runs that differ says so), with the Hypothesis release and dynfuzz's commit."""
    parts = dict.fromkeys(describe_patches(s.get("torch_patches")) for s in summaries)
    made = dict.fromkeys(f"Hypothesis {s.get('hypothesis', '?')}, dynfuzz {s.get('dynfuzz_commit') or 'commit unknown'}"
                         for s in summaries)
    return " | ".join(parts) + "; " + " | ".join(made)


def load(path: Path) -> Campaign:
    """Read one campaign folder; a missing or unreadable summary.json is a usage error."""
    summary_path = path / "summary.json" if path.is_dir() else path
    try:
        summary = json.loads(summary_path.read_text())
    except OSError as e:
        raise UsageError(f"{path} is not a campaign folder: {summary_path}: {e.strerror}") from None
    except ValueError as e:
        raise UsageError(f"{summary_path} is not valid JSON: {e}") from None
    folder = summary_path.parent
    samples = _json(folder / "samples.json") or []
    rows = [_bucket_row(b, folder) for b in summary.get("buckets", [])] if "buckets" in summary else \
        [_finding_row(u, folder) for u in summary.get("unique_findings", [])]
    for row in rows:
        row.campaign = str(folder)
    return Campaign(folder, summary, [tuple(s) for s in samples], rows, _json(folder / "coverage.json"))


def merge(paths: list[Path], since: Path | None = None) -> Report:
    """Several campaigns as one report: buckets with the same key merged, counts summed."""
    campaigns = [load(p) for p in paths]
    merged: dict[str, Row] = {}
    for c in campaigns:
        for row in c.rows:
            if row.key in merged:
                merged[row.key].count += row.count
            else:
                merged[row.key] = Row(**vars(row))
    rows = sorted(merged.values(), key=lambda r: (TIER_ORDER.index(r.tier) if r.tier in TIER_ORDER else len(TIER_ORDER),
                                                  -r.count, r.key))
    return Report(campaigns, rows, load(since) if since else None)


def _json(path: Path) -> Any:
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return None


def _read(path: str | Path | None) -> str:
    if not path:
        return ""
    try:
        return Path(path).read_text()
    except OSError:
        return ""


def resolve_path(folder: Path, path: str | None) -> Path | None:
    """A path recorded in summary.json: relative to the campaign folder `folder` (never to the working directory;
    an earlier layout's path relative to its command's directory is found by its `findings/...` tail), or
    absolute."""
    if not path:
        return None
    p = Path(path)
    if not p.is_absolute() and (folder / p).exists():
        return folder / p
    parts = p.parts
    if "findings" in parts:
        moved = folder.joinpath(*parts[parts.index("findings"):])
        if moved.exists():
            return moved
    if p.is_absolute():
        return p
    return folder / p


def repro_meta(text: str, path: Path | None = None) -> dict[str, Any]:
    """A saved repro's metadata: its sidecar file (with `path`), else what its text carries (`repro_meta`)."""
    from dynfuzz.triage.repro_meta import meta_of, meta_of_text

    return meta_of(path, text) if path is not None else meta_of_text(text)


def _bucket_row(b: dict[str, Any], folder: Path) -> Row:
    bucket_dir = resolve_path(folder, b.get("folder"))
    repro_path = resolve_path(folder, b.get("repro"))
    if repro_path is None and bucket_dir is not None:
        examples = sorted((bucket_dir / "examples").glob("*.py")) if (bucket_dir / "examples").is_dir() else []
        repro_path = examples[0] if examples else None
    repro = _read(repro_path)
    meta = repro_meta(repro, repro_path)
    report = _read(bucket_dir / "report.md") if bucket_dir else ""
    return Row(b.get("key", "?"), b.get("cause") or meta.get("title", ""), b.get("oracle", "?"), b.get("class", "?"),
               int(b.get("count", 1)), b.get("layer") or meta.get("layer"), b.get("status", ""),
               b.get("first_seen_seconds"), tuple(meta.get("tags", ())), repro,
               str(repro_path) if repro_path else None, report, tier=b.get("tier") or tier_of(b.get("class", "")),
               releases=dict(b.get("releases") or {}), release_verdict=b.get("release_verdict", ""),
               fixed_in=b.get("fixed_in"))


def _finding_row(u: dict[str, Any], folder: Path) -> Row:
    path = resolve_path(folder, u.get("file"))
    repro = _read(path)
    meta = repro_meta(repro, path)
    doc = ast.get_docstring(ast.parse(repro)) if repro and meta else None
    return Row(u.get("bucket") or u.get("signature", "?"), u.get("message", ""), u.get("oracle", "?"),
               u.get("kind", "?"), int(u.get("count", 1)), u.get("layer") or meta.get("layer"), "",
               None, tuple(meta.get("tags", ())), repro, str(path) if path else None, doc or u.get("message", ""))


@dataclass
class Changes:
    """Against an earlier campaign: buckets new now, buckets no longer seen, and count changes."""

    new: list[Row]
    gone: list[Row]
    changed: list[tuple[Row, int, int]]  # (row now, count before, count now)


def changes(report: Report) -> Changes | None:
    if report.since is None:
        return None
    before = {r.key: r for r in report.since.rows}
    now = {r.key: r for r in report.rows}
    return Changes([r for k, r in now.items() if k not in before],
                   sorted((r for k, r in before.items() if k not in now), key=lambda r: -r.count),
                   [(r, before[k].count, r.count) for k, r in now.items()
                    if k in before and before[k].count != r.count])


def save_samples(folder: Path, samples: list[tuple[float, int, int]]) -> Path:
    """Write a campaign's time samples, (seconds, cases, unique signatures), as `samples.json`."""
    path = folder / "samples.json"
    path.write_text(json.dumps([list(s) for s in samples]) + "\n")
    return path
