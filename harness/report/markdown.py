"""The report as Markdown (for a PR comment, a wiki page or a terminal): the same sections as the HTML
page, with the plots written as SVG files beside it and linked."""
from __future__ import annotations

from pathlib import Path

from dynfuzz.report.data import Changes, Report, Row
from dynfuzz.report.figures import Figure, coverage_totals


def _cell(text: object) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def _rows(rows: list[Row]) -> list[str]:
    return [f"- `{_cell(r.key)}` ({r.count}x, {r.oracle})" for r in rows] or ["- none"]


def render(report: Report, changes: Changes | None, figures: list[Figure], chart_dir: Path, page: Path) -> str:
    """Markdown text; each figure's SVG is written to `chart_dir` and linked relative to `page`."""
    totals = report.totals
    out = ["# dynfuzz report", "",
           f"torch {totals['torch']}; {totals['configuration']}; {len(report.campaigns)} campaign(s)", "",
           totals["patches"], ""]
    if changes is not None:
        out += [f"## Since {report.since.path if report.since else ''}", "",
                f"### New buckets ({len(changes.new)})", *_rows(changes.new), "",
                f"### No longer seen ({len(changes.gone)})", *_rows(changes.gone), "",
                f"### Count changes ({len(changes.changed)})",
                *([f"- `{_cell(r.key)}`: {before} -> {now}" for r, before, now in changes.changed] or ["- none"]), ""]
    out += ["## Totals", "", "| cases | cases/s | buckets | bugs | findings | known | crashes | hangs | seconds |",
            "|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
            "| " + " | ".join(str(totals.get(k, 0)) for k in ("cases", "cases_per_second", "buckets", "bugs",
                                                              "findings", "known", "crashes", "hangs", "seconds"))
            + " |", ""]
    chart_dir.mkdir(parents=True, exist_ok=True)
    for section, title in (("time", "Over time"), ("breakdown", "Buckets by oracle, layer and feature tag"),
                           ("coverage", "Coverage")):
        out += [f"## {title}", ""]
        if section == "coverage":
            out += _behaviours(report) + _coverage(report)
        for f in figures:
            if f.section != section:
                continue
            if f.svg:
                path = chart_dir / f"{f.id}.svg"
                path.write_text(f.svg)
                out += [f"![{f.title}]({path.relative_to(page.parent).as_posix()})", ""]
            else:
                out += [f"*{f.title}:* {f.note}", ""]
    out += ["## Buckets", ""]
    if not report.rows:
        out += ["No buckets: every case agreed with eager (or matched a known issue).", ""]
    else:
        checked = any(r.releases for r in report.rows)
        head = "| # | bucket | tier | oracle | class | layer | count | status |" + (" releases |" if checked else "")
        out += [head, "|---:|---|---|---|---|---|---:|---|" + ("---|" if checked else "")]
        out += [f"| {i} | `{_cell(r.key)}` {_cell(r.title)} | {r.tier or '-'} | {r.oracle} | {r.kind} | "
                f"{r.layer or '-'} | {r.count} | {r.status or '-'} |" + (f" {_cell(r.release_verdict or '-')} |"
                                                                          if checked else "")
                for i, r in enumerate(report.rows, start=1)]
        out.append("")
        fixed = [(i, r) for i, r in enumerate(report.rows, start=1) if r.fixed_in]
        if fixed:
            out += ["## Fixed in a newer release", "",
                    "Not counted among bugs: they pass on the newest release tried, and still affect older ones.", "",
                    *[f"- {i}. `{_cell(r.key)}`: fixed in {r.fixed_in}" for i, r in fixed], ""]
        for i, r in enumerate(report.rows, start=1):
            out += [f"### {i}. `{_cell(r.key)}`", "", f"{r.title}", ""]
            if r.releases:
                out += [f"Torch releases: {_cell(r.release_line)}", ""]
            if r.repro_path:
                out += [f"Repro: `{r.repro_path}`", ""]
            if r.repro:
                out += ["<details><summary>repro</summary>", "", "```python", r.repro.rstrip(), "```", "",
                        "</details>", ""]
            if r.report:
                out += ["<details><summary>bug report</summary>", "", r.report.rstrip(), "", "</details>", ""]
    return "\n".join(out) + "\n"


def _behaviours(report: Report) -> list[str]:
    from dynfuzz.report.behaviour_view import summary_line, table_rows, view

    v = view(report)
    if v is None:
        return []
    out = [summary_line(v), "", "| category | reached | reachable universe | out of reach | never reached |",
           "|---|---:|---:|---:|---:|",
           *[f"| {r['category']} | {r['reached']} | {r['reachable']} | {r['out_of_reach']} | {r['never']} |"
             for r in table_rows(v)], ""]
    if v.new_since is not None:
        out += [f"New since the earlier campaign ({len(v.new_since)}): "
                + (", ".join(f"`{_cell(b)}`" for b in v.new_since) or "none"), ""]
    for category, names in v.never.items():
        if names:
            out += [f"<details><summary>{category}: {len(names)} never reached</summary>", "",
                    ", ".join(f"`{_cell(n)}`" for n in names), "", "</details>", ""]
    return out


def _coverage(report: Report) -> list[str]:
    rows = coverage_totals(report)
    if not rows:
        return []
    return ["| campaign | lines covered | covered / lines | reachable torch/_dynamo |", "|---|---:|---:|---:|",
            *[f"| {name} | {t['all'].get('percent', '-')}% | {t['all'].get('covered', '-')} / "
              f"{t['all'].get('lines', '-')} | {t['reachable'].get('percent', '-')}% |" for name, t in rows], ""]
