"""`dynfuzz merge DIR... --out OUT`: one summary and one findings folder from the runs of a sharded campaign.

Rules (the fields of `summary.json` are a contract, so unknown numeric fields follow the same rules):
- counts add up (cases, findings, crashes, per-oracle, per-kind, per-feature and per-node counts...);
- `seconds` (and `budget_seconds`, `startup_seconds`) is the longest run's: the shards ran side by side;
- rates and fractions are recomputed from the merged counts: `cases_per_second` is the total cases over
  the longest run's seconds, `valid_fraction`, `overhead_fraction`, mean timings weighted by cases;
- `unique_findings` are united by signature and cheap key (as a campaign counts them) and `buckets` by
  bucket key, their counts added (a bucket's signatures united, first seen at the earliest); a bucket takes
  its status, verdict and repro from the run that confirmed it best (`ok` over `unminimized` over `flaky`:
  a bucket flaky in one shard and reproduced in another is a bug); `unique` and `bugs` are recounted from
  the union;
- lists (families, harness error records...) are united, in order;
- settings that must agree (torch, backend, device...) are kept when equal, listed when not.

Each run's `findings/` entries are copied under `OUT/findings/` (the first copy of a name wins), and the
`file` paths in the merged summary point there.
"""
from __future__ import annotations

import json
import shutil
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from dynfuzz.errors import UsageError
from dynfuzz.triage.buckets import row_is_bug, tier_of

LONGEST = frozenset({"seconds", "budget_seconds", "startup_seconds"})
RECOMPUTED = frozenset({"cases_per_second", "valid_fraction", "overhead_fraction", "unique", "bugs", "refusals",
                        "performance", "mean_timings"})
UNITED_BY = {"unique_findings": ("signature", "cheap_key"), "buckets": ("key",)}
NOT_COUNTS = frozenset({"seed", "fullgraph", "dynamic"})  # numbers or booleans that are settings, not counts
ITEM_COUNTS = ("count", "findings", "examples", "cases")  # per-bucket numbers that add up across runs
# a bucket's best-confirmed status wins: reproduced (explained or not) before a repro that did not run cleanly,
# before one not minimized yet, and flaky (did not diverge again) last
STATUS_RANK = {"ok": 0, "unexplained": 1, "unverified": 2, "unminimized": 3, "flaky": 4}
CONFIRMATION = ("status", "verdict", "repro", "folder", "note", "cause")  # taken together from that run


def load_runs(dirs: Iterable[str | Path]) -> list[tuple[Path, dict[str, Any]]]:
    """Each DIR's summary.json; a missing or unreadable one is a UsageError."""
    runs = []
    for d in dirs:
        path = Path(d) / "summary.json" if Path(d).is_dir() else Path(d)
        try:
            runs.append((path.parent, json.loads(path.read_text())))
        except FileNotFoundError:
            raise UsageError(f"no summary.json in {d}") from None
        except (OSError, ValueError) as e:
            raise UsageError(f"cannot read {path}: {e}") from None
    if not runs:
        raise UsageError("merge needs at least one run directory")
    return runs


def _unite(lists: Iterable[list[dict[str, Any]]], by: tuple[str, ...]) -> list[dict[str, Any]]:
    """Items united by the fields `by`: the first item's fields, with per-run counts added."""
    merged: dict[str, dict[str, Any]] = {}
    for items in lists:
        for item in items:
            key = json.dumps([item.get(f) for f in by]) if item.get(by[0]) is not None \
                else json.dumps(item, sort_keys=True)
            if key not in merged:
                merged[key] = dict(item)
                continue
            into = merged[key]
            if "status" in item and STATUS_RANK.get(item["status"], 3) < STATUS_RANK.get(into.get("status"), 3):
                into.update({f: item[f] for f in CONFIRMATION if f in item})
            for field in ITEM_COUNTS:
                if isinstance(item.get(field), int) and isinstance(into.get(field), int):
                    into[field] += item[field]
            if isinstance(item.get("signatures"), list) and isinstance(into.get("signatures"), list):
                into["signatures"] = list(dict.fromkeys(into["signatures"] + item["signatures"]))
            if isinstance(item.get("first_seen_seconds"), (int, float)):
                into["first_seen_seconds"] = min(into.get("first_seen_seconds", item["first_seen_seconds"]),
                                                 item["first_seen_seconds"])
    return sorted(merged.values(), key=lambda i: -int(i.get("count", 0) or 0))


def _add(values: list[Any]) -> Any:
    """Counts add (recursively in dicts), lists are united in order; anything else is kept when all runs
    agree, else listed."""
    present = [v for v in values if v is not None]
    if not present:
        return None
    if all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in present):
        total = sum(present)
        return round(total, 6) if isinstance(total, float) else total
    if all(isinstance(v, dict) for v in present):
        keys = dict.fromkeys(k for v in present for k in v)
        return {k: _add([v.get(k) for v in present]) for k in keys}
    if all(isinstance(v, list) for v in present):
        return _same([x for v in present for x in v], always_list=True)
    distinct = []
    for v in present:
        if v not in distinct:
            distinct.append(v)
    return distinct[0] if len(distinct) == 1 else distinct


def _same(values: list[Any], always_list: bool = False) -> Any:
    """The one value all runs agree on, else the distinct values in order (always a list with `always_list`)."""
    distinct = []
    for v in values:
        if v not in distinct:
            distinct.append(v)
    return distinct if always_list or len(distinct) != 1 else distinct[0]


def merge_summaries(summaries: list[dict[str, Any]]) -> dict[str, Any]:
    """One summary for runs that ran side by side (see the module docstring for the rules)."""
    keys = dict.fromkeys(k for s in summaries for k in s)
    out: dict[str, Any] = {}
    for key in keys:
        values = [s.get(key) for s in summaries]
        if key in LONGEST:
            out[key] = max((v for v in values if v is not None), default=0)
        elif key in UNITED_BY:
            out[key] = _unite((v or [] for v in values), UNITED_BY[key])
        elif key in NOT_COUNTS or key in RECOMPUTED or key == "shard":
            out[key] = _same(values)
        else:
            out[key] = _add(values)
    cases = sum(s.get("cases", 0) for s in summaries)
    seconds = max(out.get("seconds", 0), 1e-9)
    out["unique"] = len(out.get("unique_findings", []))
    if "bugs" in keys:
        buckets = out.get("buckets", [])
        out["bugs"] = sum(1 for b in buckets if row_is_bug(b))
        for field_name, tier in (("refusals", "refusal"), ("performance", "performance")):
            out[field_name] = sum(1 for b in buckets
                                  if tier_of(b.get("class", "")) == tier and b.get("status") != "flaky")
    out["cases_per_second"] = round(cases / seconds, 3)
    if "valid_fraction" in keys:
        out["valid_fraction"] = round(1 - out.get("eager_errors", 0) / max(cases, 1), 4)
    if "overhead_fraction" in keys:
        worker_seconds = sum(s.get("seconds", 0) * max(s.get("workers", 1), 1) for s in summaries)
        out["overhead_fraction"] = round(1 - out.get("torch_seconds", 0) / max(worker_seconds, 1e-9), 4)
    if "mean_timings" in keys:
        names = dict.fromkeys(k for s in summaries for k in (s.get("mean_timings") or {}))
        out["mean_timings"] = {k: round(sum((s.get("mean_timings") or {}).get(k, 0) * s.get("cases", 0)
                                            for s in summaries) / max(cases, 1), 5) for k in names}
    out["shards"] = [s.get("shard") for s in summaries]
    out["runs"] = len(summaries)
    return out


def _copy_findings(runs: list[tuple[Path, dict[str, Any]]], out: Path) -> dict[str, str]:
    """Copy each run's findings/ entries into OUT/findings/; returns old path -> new path for summary files."""
    moved: dict[str, str] = {}
    target = out / "findings"
    target.mkdir(parents=True, exist_ok=True)
    for run_dir, _ in runs:
        source = run_dir / "findings"
        if not source.is_dir():
            continue
        for path in sorted(source.rglob("*")):  # a bucket found by several runs gets every run's examples
            dest = target / path.relative_to(source)
            if path.is_dir():
                dest.mkdir(parents=True, exist_ok=True)
            elif not dest.exists():
                shutil.copy2(path, dest)
        for entry in source.iterdir():
            for prefix in (str(entry), str(entry.resolve())):
                moved[prefix] = str(target / entry.name)
    return moved


def _repoint(items: list[dict[str, Any]], moved: dict[str, str]) -> None:
    for item in items:
        for field in ("file", "repro", "folder", "path"):
            value = item.get(field)
            if not isinstance(value, str):
                continue
            for old, new in moved.items():
                if value == old or value.startswith(old + "/"):
                    item[field] = new + value[len(old):]
                    break


def merge(dirs: list[str], out: Path) -> dict[str, Any]:
    """Merge the runs in `dirs` into `out/summary.json` and `out/findings/`; returns the merged summary."""
    from dynfuzz.campaign.out_folder import claim, holds_campaign

    runs = load_runs(dirs)
    if out.is_dir() and holds_campaign(out):
        raise UsageError(f"merge --out {out}: it holds a campaign already (a summary.json, findings or a queue); "
                         f"merge into a new folder")
    lock = claim(out, resume=True, verb="merge")
    merged = merge_summaries([s for _, s in runs])
    merged["merged_from"] = [str(d) for d, _ in runs]
    try:
        moved = _copy_findings(runs, out)
        for key in ("unique_findings", "buckets"):
            _repoint(merged.get(key) or [], moved)
        (out / "summary.json").write_text(json.dumps(merged, indent=2) + "\n")
    except OSError as e:
        raise UsageError(f"cannot write the merged run to {out}: {e.strerror or e}") from None
    finally:
        lock.close()
    return merged
