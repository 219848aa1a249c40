"""The report as one self-contained HTML page: inline CSS, inline SVG plots, highlighted repros.

Nothing is fetched when the page is viewed (no scripts, fonts, or images from the network), so it can
be attached to a CI run or mailed and still open offline.
"""
from __future__ import annotations

from html import escape

from dynfuzz.oracles.policy import RULES
from dynfuzz.report.data import Changes, Report, Row
from dynfuzz.report.figures import Figure, coverage_totals

CSS = """
body{font-family:system-ui,-apple-system,'Segoe UI',sans-serif;margin:1.5rem auto;max-width:72rem;color:#222;
 padding:0 1rem;line-height:1.4}
h1{margin-bottom:.2rem}h2{border-bottom:1px solid #ddd;padding-bottom:.2rem;margin-top:2rem}
.muted{color:#666}.totals{display:grid;grid-template-columns:repeat(auto-fill,minmax(9rem,1fr));gap:.5rem}
.total{border:1px solid #ddd;border-radius:6px;padding:.4rem .6rem}.total b{display:block;font-size:1.4rem}
.figures{display:grid;grid-template-columns:repeat(auto-fit,minmax(26rem,1fr));gap:1rem}
figure{margin:0;border:1px solid #eee;border-radius:6px;padding:.4rem}figure svg{width:100%;height:auto}
figcaption{font-size:.9rem;color:#444}
table{border-collapse:collapse;width:100%;font-size:.9rem}th,td{border-bottom:1px solid #eee;padding:.3rem .4rem;
 text-align:left;vertical-align:top}th{background:#f6f6f6}td.n{text-align:right}
code,pre{font-family:ui-monospace,Menlo,Consolas,monospace;font-size:.8rem}
.repro pre{max-height:32rem;overflow:auto;padding:.5rem;border-radius:4px}
.report{white-space:pre-wrap;background:#fafafa;padding:.5rem;border-radius:4px;max-height:24rem;overflow:auto}
.new{color:#b00020;font-weight:600}.gone{color:#2e7d32;font-weight:600}
"""


def render(report: Report, changes: Changes | None, figures: list[Figure]) -> str:
    totals = report.totals
    parts = [
        "<!doctype html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>dynfuzz report: {totals['buckets']} buckets in {totals['cases']} cases</title>",
        f"<style>{CSS}</style></head><body>",
        "<header><h1>dynfuzz report</h1>",
        f"<p class=\"muted\">torch {escape(str(totals['torch']))}; {escape(totals['configuration'])}; "
        f"{len(report.campaigns)} campaign(s): {escape(', '.join(str(c.path) for c in report.campaigns))}</p>"
        f"<p class=\"muted\" id=\"torch-patches\">{escape(totals['patches'])}</p>"
        "</header>",
    ]
    if changes is not None:
        parts.append(_changes(report, changes))
    # The bug table first (by tier, bugs first), the totals and the plots after it.
    parts += [_buckets(report.rows), _totals(totals), _figure_section("time", "Over time", figures),
              _figure_section("breakdown", "Buckets by oracle, layer and feature tag", figures),
              _figure_section("coverage", "Coverage", figures, _behaviour_section(report) + _coverage_table(report)),
              _policy(), "</body></html>"]
    return "\n".join(parts) + "\n"


def _totals(totals: dict) -> str:
    shown = [("cases", "cases"), ("cases/s", "cases_per_second"), ("buckets", "buckets"), ("bugs", "bugs"),
             ("findings", "findings"), ("known", "known"), ("crashes", "crashes"), ("hangs", "hangs"),
             ("seconds", "seconds"), ("torch seconds", "torch_seconds")]
    cells = "".join(f'<div class="total" id="total-{key}"><b>{escape(str(totals.get(key, 0)))}</b>{label}</div>'
                    for label, key in shown)
    return f'<section id="totals"><h2>Totals</h2><div class="totals">{cells}</div></section>'


def _figure_section(section: str, title: str, figures: list[Figure], extra: str = "") -> str:
    items = []
    for f in figures:
        if f.section != section:
            continue
        body = f.svg if f.svg else f'<p class="muted">{escape(f.note)}</p>'
        items.append(f'<figure class="chart" id="chart-{f.id}">{body}<figcaption>{escape(f.title)}</figcaption>'
                     "</figure>")
    return f'<section id="{section}"><h2>{title}</h2>{extra}<div class="figures">{"".join(items)}</div></section>'


def _coverage_table(report: Report) -> str:
    rows = coverage_totals(report)
    if not rows:
        return ""
    body = "".join(
        f"<tr><td>{escape(name)}</td><td class=n>{t['all'].get('percent', '-')}%</td>"
        f"<td class=n>{t['all'].get('covered', '-')} / {t['all'].get('lines', '-')}</td>"
        f"<td class=n>{t['reachable'].get('percent', '-')}%</td></tr>" for name, t in rows)
    return ("<table id=\"coverage-totals\"><thead><tr><th>campaign</th><th>lines covered</th><th>covered / lines"
            f"</th><th>reachable torch/_dynamo</th></tr></thead><tbody>{body}</tbody></table>")


def _behaviour_section(report: Report) -> str:
    """Behaviours reached per category against the reachable universe, new ones since an earlier campaign,
    and the reachable ones never reached (what the generators could add)."""
    from dynfuzz.report.behaviour_view import summary_line, table_rows, view

    v = view(report)
    if v is None:
        return ""
    body = "".join(f"<tr><td>{escape(r['category'])}</td><td class=n>{r['reached']}</td><td class=n>"
                   f"{r['reachable']}</td><td class=n>{r['out_of_reach']}</td><td class=n>{r['never']}</td></tr>"
                   for r in table_rows(v))
    never = "".join(f"<details><summary>{escape(c)}: {len(names)} never reached</summary><p>"
                    f"{escape(', '.join(names))}</p></details>" for c, names in v.never.items() if names)
    new = ""
    if v.new_since is not None:
        new = (f'<details id="new-behaviours"><summary>{len(v.new_since)} behaviours new since the earlier '
               f"campaign</summary><p>{escape(', '.join(v.new_since)) or 'none'}</p></details>")
    return (f'<div id="behaviours"><p>{escape(summary_line(v))}</p><table id="behaviour-table"><thead><tr>'
            "<th>category</th><th>reached</th><th>reachable universe</th><th>out of reach</th><th>never reached"
            f"</th></tr></thead><tbody>{body}</tbody></table>{new}<div id=\"never-reached\">{never}</div></div>")


def _highlight(source: str) -> str:
    from pygments import highlight
    from pygments.formatters import HtmlFormatter
    from pygments.lexers import PythonLexer

    return highlight(source, PythonLexer(), HtmlFormatter(noclasses=True, style="friendly"))


def _bucket_row(i: int, row: Row) -> str:
    repro = _highlight(row.repro) if row.repro else '<p class="muted">no repro file found</p>'
    where = f"<p class=muted>{escape(row.repro_path)}</p>" if row.repro_path else ""
    report = f'<div class="report">{escape(row.report)}</div>' if row.report else ""
    tags = escape(", ".join(row.tags[:12]) + (" ..." if len(row.tags) > 12 else ""))
    releases = f'<br><span class="releases">torch releases: {escape(row.release_line)}</span>' if row.releases \
        else ""
    return (f'<tr class="bucket" id="bucket-{i}"><td class=n>{i}</td>'
            f"<td><b>{escape(row.key)}</b><br>{escape(row.title)}{releases}"
            f'<details class="repro"><summary>repro and bug report</summary>{where}{repro}{report}</details></td>'
            f"<td>{escape(row.tier or '-')}</td><td>{escape(row.oracle)}</td><td>{escape(row.kind)}</td>"
            f"<td>{escape(row.layer or '-')}</td>"
            f"<td class=n>{row.count}</td><td>{escape(row.status or '-')}</td><td>{tags}</td></tr>")


def _buckets(rows: list[Row]) -> str:
    if not rows:
        return ('<section id="buckets"><h2>Buckets</h2><p id="no-buckets">No buckets: every case agreed with '
                "eager (or matched a known issue).</p></section>")
    body, tier = [], None
    for i, r in enumerate(rows, start=1):  # rows come sorted by tier: a heading row opens each tier
        if r.tier != tier:
            tier = r.tier
            n = sum(1 for x in rows if x.tier == tier)
            body.append(f'<tr class="tier" id="tier-{escape(tier or "none")}"><th colspan="9">{escape(tier or "-")}'
                        f" ({n} bucket{'s' if n != 1 else ''})</th></tr>")
        body.append(_bucket_row(i, r))
    fixed = "".join(f'<li><a href="#bucket-{i}">{i}</a>. {escape(r.key)}: fixed in {escape(r.fixed_in)}</li>'
                    for i, r in enumerate(rows, start=1) if r.fixed_in)
    if fixed:
        fixed = ('<h3>Fixed in a newer release</h3><p class=muted>Not counted among bugs: they pass on the newest '
                 f'release tried, and still affect older ones.</p><ul id="fixed-buckets">{fixed}</ul>')
    return ('<section id="buckets"><h2>Buckets by tier</h2><table id="bucket-table"><thead><tr><th>#</th>'
            "<th>bucket</th><th>tier</th><th>oracle</th><th>class</th><th>layer</th><th>count</th><th>status</th><th>tags</th>"
            "</tr></thead>"
            f"<tbody>{''.join(body)}</tbody></table>{fixed}</section>")


def _row_list(rows: list[Row], cls: str) -> str:
    return "".join(f'<li class="{cls}">{escape(r.key)} <span class=muted>({r.count}x, {escape(r.oracle)})</span>'
                   "</li>" for r in rows) or "<li class=muted>none</li>"


def _changes(report: Report, ch: Changes) -> str:
    changed = "".join(f"<li>{escape(r.key)}: {before} &rarr; {now}</li>" for r, before, now in ch.changed) \
        or "<li class=muted>none</li>"
    prev = escape(str(report.since.path)) if report.since else ""
    return (f'<section id="changes"><h2>Since {prev}</h2>'
            f'<h3>New buckets ({len(ch.new)})</h3><ul id="new-buckets">{_row_list(ch.new, "new")}</ul>'
            f'<h3>No longer seen ({len(ch.gone)})</h3><ul id="gone-buckets">{_row_list(ch.gone, "gone")}</ul>'
            f'<h3>Count changes ({len(ch.changed)})</h3><ul id="count-changes">{changed}</ul></section>')


def _policy() -> str:
    items = "".join(f"<li><b>{escape(r.name)}</b> ({escape(', '.join(sorted(r.backends)))}): {escape(r.reason)}"
                    "</li>" for r in RULES)
    return ('<section id="policy"><h2>Legitimate differences not reported</h2><p class=muted>From '
            f"oracles/policy.py; every other difference from eager is a finding.</p><ul>{items}</ul></section>")
