"""The report's plots, decided once for both renderings (HTML inlines them, Markdown links to files)."""
from __future__ import annotations

from dataclasses import dataclass

from dynfuzz.report import charts
from dynfuzz.report.data import Campaign, Report

DYNAMO_PREFIX = "torch/_dynamo/"


@dataclass(frozen=True)
class Figure:
    """One plot: its id (HTML anchor and file name), title, section, SVG text, or why there is none."""

    id: str
    title: str
    section: str  # time, breakdown, coverage
    svg: str | None
    note: str = ""


def figures(report: Report) -> list[Figure]:
    return [_buckets_over_time(report), _rate(report), *_breakdowns(report), _behaviours(report), *_coverage(report)]


def _behaviours(report: Report) -> Figure:
    from dynfuzz.report.behaviour_view import curve_svg

    svg = curve_svg(report)
    return Figure("behaviours-over-cases", "Distinct Dynamo behaviours against cases", "coverage", svg,
                  "" if svg else "No behaviours recorded (a summary.json from before they were).")


def _label(report: Report, i: int) -> str:
    return report.campaigns[i].path.name if len(report.campaigns) > 1 else "cases/s"


def _rate(report: Report) -> Figure:
    series = {_label(report, i): charts.rate(c.samples) for i, c in enumerate(report.campaigns)}
    if not any(series.values()):
        return Figure("cases-per-second", "Cases per second over time", "time", None,
                      "No time samples were recorded (samples.json is missing or has fewer than two points).")
    return Figure("cases-per-second", "Cases per second over time", "time",
                  charts.line_chart(series, "Cases per second (sliding window)", "seconds", "cases/s"))


def bucket_series(c: Campaign, name: str = "buckets") -> tuple[str, list[tuple[float, float]]] | None:
    """Cumulative distinct buckets by the time each was first seen. Only where no bucket has a first-seen time
    (an older campaign) are its unique signatures from the time samples plotted, labelled so; None: no data."""
    end = float(c.summary.get("seconds", 0.0))
    seen = [r.first_seen for r in c.rows if r.first_seen is not None]
    if seen or ("buckets" in c.summary and not c.rows):
        return name, charts.cumulative(seen, end)
    if c.samples:
        return name.replace("buckets", "unique findings"), [(s[0], float(s[2])) for s in c.samples]
    return None


def _buckets_over_time(report: Report) -> Figure:
    series = dict(filter(None, (bucket_series(c, c.path.name if len(report.campaigns) > 1 else "buckets")
                                for c in report.campaigns)))
    if not series:
        return Figure("buckets-over-time", "Cumulative buckets over time", "time", None, "No time data recorded.")
    return Figure("buckets-over-time", "Cumulative buckets over time", "time",
                  charts.line_chart(series, "Buckets first seen (cumulative)", "seconds", "buckets", steps=True))


def _breakdowns(report: Report) -> list[Figure]:
    out = []
    for attr, title in (("oracle", "Buckets by oracle"), ("layer", "Buckets by layer"),
                        ("tags", "Buckets by feature tag")):
        counts = report.counter(attr)
        if attr == "layer" and "unknown" in counts:
            counts["not triangulated"] = counts.pop("unknown")
        fid = f"buckets-by-{attr.rstrip('s')}"
        if not counts:
            out.append(Figure(fid, title, "breakdown", None, "No buckets."))
        else:
            out.append(Figure(fid, title, "breakdown", charts.bar_chart(counts, title, "buckets")))
    return out


def _coverage(report: Report) -> list[Figure]:
    features = report.features()
    out = [Figure("feature-coverage", "Cases per feature tag", "coverage",
                  charts.bar_chart(features, "Cases per feature tag", "cases", top=40) if features else None,
                  "" if features else "No cases ran.")]
    files: dict[str, float] = {}
    for c in report.campaigns:
        for name, row in ((c.coverage or {}).get("files") or {}).items():
            if name.startswith(DYNAMO_PREFIX):
                percent = row["percent"] if isinstance(row, dict) else row[2]
                files[name[len(DYNAMO_PREFIX):]] = max(files.get(name[len(DYNAMO_PREFIX):], 0.0), percent)
    if files:
        out.append(Figure("dynamo-coverage", "Line coverage of torch/_dynamo files (%)", "coverage",
                          charts.bar_chart(files, "torch/_dynamo line coverage (%)", "% of lines", top=30)))
    else:
        out.append(Figure("dynamo-coverage", "Line coverage of torch/_dynamo files", "coverage", None,
                          "No coverage run: `dynfuzz fuzz --coverage` writes coverage.json."))
    return out


def coverage_totals(report: Report) -> list[tuple[str, dict]]:
    """(campaign, totals) for each campaign that measured coverage (`totals` and `reachable`)."""
    rows = []
    for c in report.campaigns:
        if c.coverage:
            rows.append((c.path.name, {"all": c.coverage.get("totals") or {},
                                       "reachable": c.coverage.get("reachable") or {}}))
    return rows
