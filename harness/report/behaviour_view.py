"""The report's view of Dynamo's behaviours (summary.json `behaviours`, campaign/behaviour_log.py): reached per
category against the reachable universe, behaviours against cases, what is new since an earlier campaign,
and the reachable behaviours no campaign reached, for both renderings."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from dynfuzz.report import charts
from dynfuzz.report.data import Report


@dataclass
class BehaviourView:
    """The campaigns' behaviours, merged: reached (union), never reached (reachable in every campaign's
    universe and reached by none), per-category counts, and what is new since `report.since`."""

    reached: dict[str, int] = field(default_factory=dict)  # behaviour -> cases
    categories: list[tuple[str, int, int | None, int | None]] = field(default_factory=list)  # name, reached,
    # reachable universe (None: an open category), out of reach
    never: dict[str, list[str]] = field(default_factory=dict)
    new_since: list[str] | None = None
    pairs: int = 0


def view(report: Report) -> BehaviourView | None:
    """None when no campaign recorded behaviours (an older summary.json)."""
    blocks = [c.summary.get("behaviours") for c in report.campaigns]
    blocks = [b for b in blocks if b and b.get("cases")]
    if not blocks:
        return None
    v = BehaviourView()
    for b in blocks:
        for name, row in b.get("reached", {}).items():
            v.reached[name] = v.reached.get(name, 0) + int(row[0])
        v.pairs = max(v.pairs, int(b.get("pairs", 0)))
    never: dict[str, set[str]] | None = None
    for b in blocks:
        lists = {c: set(names) for c, names in (b.get("never_reached") or {}).items()}
        never = lists if never is None else {c: never.get(c, set()) & lists.get(c, set()) for c in lists}
    reached_names: dict[str, set[str]] = {}
    for name in v.reached:
        category, _, rest = name.partition(":")
        reached_names.setdefault("graph-break" if category == "unsupported" else category, set()).add(rest)
    v.never = {c: sorted(names - reached_names.get(c, set())) for c, names in (never or {}).items()}
    universe = blocks[0].get("universe") or {}
    counts: dict[str, int] = {}
    for name in v.reached:
        counts[name.partition(":")[0]] = counts.get(name.partition(":")[0], 0) + 1
    for category in sorted(set(counts) | set(universe)):
        u = universe.get(category)
        if category in universe:
            hit = u.get("reachable", 0) - len(v.never.get(category, []))
            v.categories.append((category, hit, u.get("reachable"), u.get("out_of_reach")))
        else:
            v.categories.append((category, counts.get(category, 0), None, None))
    if report.since is not None:
        before = set((report.since.summary.get("behaviours") or {}).get("reached", {}))
        v.new_since = sorted(set(v.reached) - before)
    return v


def curve_series(report: Report) -> dict[str, list[tuple[float, float]]]:
    """Distinct behaviours against cases, one step line per campaign (from the summary's timeline)."""
    series = {}
    for c in report.campaigns:
        b = c.summary.get("behaviours") or {}
        if not b.get("cases"):
            continue
        points = [(0.0, 0.0)] + [(float(p[0]), float(p[2])) for p in b.get("timeline", [])]
        points.append((float(b["cases"]), float(b.get("distinct", 0))))
        series[c.path.name if len(report.campaigns) > 1 else "behaviours"] = points
    return series


def curve_svg(report: Report) -> str | None:
    series = curve_series(report)
    if not series:
        return None
    return charts.line_chart(series, "Distinct Dynamo behaviours reached", "cases", "behaviours", steps=True)


def summary_line(v: BehaviourView) -> str:
    reached = sum(n for _, n, u, _ in v.categories if u is not None)
    reachable = sum(u for _, _, u, _ in v.categories if u is not None)
    return (f"{len(v.reached)} distinct behaviours, {v.pairs} pairs; {reached} of {reachable} in the reachable "
            "universe")


def table_rows(v: BehaviourView) -> list[dict[str, Any]]:
    return [{"category": c, "reached": n, "reachable": "open" if u is None else u,
             "out_of_reach": "-" if o is None else o, "never": len(v.never.get(c, []))} for c, n, u, o in v.categories]
