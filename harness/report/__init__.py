"""Reports: the HTML page and Markdown summary a person reads after one or several campaigns.

`write_report([DIR, ...], out, since=PREV)` writes `report.html` (self-contained) and `report.md` (with
its plots in `report-charts/`); `dynfuzz report` and the end of `dynfuzz fuzz` call it.
"""
from __future__ import annotations

from pathlib import Path

REPORT_HTML = "report.html"
REPORT_MD = "report.md"
CHART_DIR = "report-charts"


def write_report(dirs: list[Path], out: Path | None = None, since: Path | None = None) -> tuple[Path, Path]:
    """Render the campaigns in `dirs` (merged) into `out` (default: the only campaign folder) and return the
    HTML and Markdown paths; `since` puts the changes against an earlier campaign first."""
    from dynfuzz.report import html, markdown
    from dynfuzz.report.data import changes, merge
    from dynfuzz.report.figures import figures

    report = merge(dirs, since)
    out = out or dirs[0]
    out.mkdir(parents=True, exist_ok=True)
    diff = changes(report)
    figs = figures(report)
    page = out / REPORT_HTML
    page.write_text(html.render(report, diff, figs))
    md = out / REPORT_MD
    md.write_text(markdown.render(report, diff, figs, out / CHART_DIR, md))
    return page, md


def write_campaign_report(out: Path, samples: list[tuple[float, int, int]]) -> Path | None:
    """The end of `dynfuzz fuzz`: save the time samples and write the report into the campaign folder.

    The findings are on disk by now, so a report that cannot be drawn (matplotlib missing, say) costs a
    one-line warning on stderr, never the campaign's exit code."""
    import sys

    from dynfuzz.report.data import save_samples

    save_samples(out, samples)
    try:
        return write_report([out])[0]
    except Exception as e:  # the campaign's results stand without their report
        print(f"dynfuzz: warning: the report was not written: {type(e).__name__}: {e}", file=sys.stderr)
        return None
