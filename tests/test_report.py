"""`dynfuzz report`: the page a person opens after a campaign, rendered for a campaign with findings and
one without, looked at in headless Chromium (skipped without it), merged, and compared `--since`."""
import json
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest
from dynfuzz.campaign.campaign import Campaign, CampaignConfig
from dynfuzz.cli import main
from dynfuzz.report import write_report
from dynfuzz.run.compilers import CompileSpec

SECTIONS = ("totals", "time", "breakdown", "coverage", "buckets", "policy")


@pytest.fixture(scope="module")
def campaigns(tmp_path_factory) -> tuple[Path, Path]:
    """A small campaign with findings (the perturb-output double) and one without (identity); each writes
    its report at the end, as `dynfuzz fuzz` does."""
    root = tmp_path_factory.mktemp("campaigns")
    for name, compiler, cases in (("found", "perturb-output", 5), ("clean", "identity", 3)):
        config = CampaignConfig(budget=120, out=root / name, spec=CompileSpec(compiler=compiler),
                                families=("basic",), max_cases=cases, progress=False, workers=0)
        Campaign(config).run()
    return root / "found", root / "clean"


def buckets_of(folder: Path) -> list:
    summary = json.loads((folder / "summary.json").read_text())
    return summary.get("buckets", summary["unique_findings"])


def test_fuzz_writes_a_self_contained_report(campaigns):
    found, _ = campaigns
    page = (found / "report.html").read_text()
    assert all(f'<section id="{s}">' in page for s in SECTIONS)
    # Nothing is fetched when the page is viewed: no scripts, stylesheets, images or fonts by URL.
    assert not re.search(r"<script|<link|<img|<iframe|\bsrc=|url\((?!#)|@import|href=\"(?!#)", page)
    assert page.count('<tr class="bucket"') == len(buckets_of(found)) > 0
    assert (found / "samples.json").exists() and (found / "report.md").exists()


def test_each_bucket_shows_its_highlighted_repro_and_report(campaigns):
    found, _ = campaigns
    page = (found / "report.html").read_text()
    rows = page.split('<tr class="bucket"')[1:]
    assert all('<details class="repro">' in row and "<pre" in row and "style=" in row for row in rows)
    assert all("import torch" in re.sub(r"<[^>]+>", "", row) for row in rows)


def test_the_bucket_table_by_tier_comes_before_the_first_plot(campaigns):
    found, _ = campaigns
    page = (found / "report.html").read_text()
    table = page.index('id="bucket-table"')
    assert table < page.index('<figure class="chart"') and table < page.index('id="totals"')
    tiers = re.findall(r'<tr class="tier" id="tier-([\w-]+)">', page)
    assert tiers and len(tiers) == len(set(tiers)), "one heading row per tier"
    assert page.index(f'id="tier-{tiers[0]}"') < page.index('<tr class="bucket"')


def test_a_bar_chart_has_no_other_bar():
    from dynfuzz.report.charts import bar_chart

    svg = bar_chart({f"tag{i}": 30 - i for i in range(30)}, "Buckets by feature tag", "buckets", top=5)
    assert "other" not in svg and "largest 5 of 30" in svg


def test_buckets_over_time_counts_distinct_buckets_not_findings_where_first_seen_exists(tmp_path):
    from dynfuzz.report.data import Campaign, Row
    from dynfuzz.report.figures import bucket_series

    rows = [Row("k1", "", "outputs", "wrong-value", 5, None, "ok", 10.0), Row("k2", "", "outputs", "crash", 9)]
    samples = [(0.0, 0, 0), (10.0, 5, 4), (30.0, 9, 14), (40.0, 12, 14)]
    label, points = bucket_series(Campaign(tmp_path, {"seconds": 40.0, "buckets": []}, samples, rows))
    assert label == "buckets" and max(y for _x, y in points) == 1  # one bucket has a first-seen time
    rows[0].first_seen = None  # an older campaign: no first-seen times at all
    label, points = bucket_series(Campaign(tmp_path, {"seconds": 40.0, "buckets": []}, samples, rows))
    assert label == "unique findings" and max(y for _x, y in points) == 14


def test_report_issue_prints_a_buckets_body_with_its_facts_over_the_plain_repro(campaigns, capsys):
    found, _ = campaigns
    bucket = buckets_of(found)[0]
    assert main(["report", str(found), "--bucket", bucket["id"], "--issue", "--no-releases"]) == 0
    body = capsys.readouterr().out
    first = body.split("```python\n", 1)[1].split("```", 1)[0]  # what PyTorch's triage extracts and runs
    assert "import torch" in first and 'if __name__ == "__main__":' in first and "exec(" not in first
    assert "DYNFUZZ" not in first and "dynfuzz-meta" not in first
    facts = body.split("```python", 1)[0]
    for line in (f"- **Tier:** {bucket['tier']}", "- **Component:** `module: dynamo`",
                 "`oncall: pt2`", "- **Fails on releases:** not checked"):
        assert line in facts, facts
    if bucket["tier"] == "miscompile":
        assert "`module: correctness (silent)`, `high priority`" in facts
    assert body == (found / "findings" / Path(bucket["folder"]).name / "report.md").read_text()
    assert main(["report", str(found), "--bucket", "no-such-bucket", "--issue"]) == 2
    assert main(["report", str(found), "--bucket", bucket["id"]]) == 2  # --bucket alone is not a report


def test_a_release_check_fills_in_the_issue_bodys_releases_line():
    from dynfuzz.triage.issue import RELEASES_LINE, with_releases

    text = f"# t\n\n{RELEASES_LINE}not checked\n\n```python\nimport torch\n```\n"
    cells = {"2.13.0": {"outcome": "reproduces"}, "2.14.1": {"outcome": "passes"}}
    assert f"{RELEASES_LINE}2.13.0 (passes on 2.14.1); fixed in 2.14.1\n" in with_releases(text, cells,
                                                                                          "fixed in 2.14.1")


def test_component_follows_the_triage_rubric():
    from dynfuzz.triage.issue import component

    assert component("miscompile", "dynamo") == ("module: dynamo", ["oncall: pt2", "module: dynamo",
                                                                    "module: correctness (silent)", "high priority"])
    assert component("crash", "aot_eager")[0] == "module: pt2-dispatcher"
    assert component("crash", "inductor")[0] == "module: inductor"
    assert component("refusal", "dynamo")[0] == "module: graph breaks"
    assert component("crash", "dynamo", static_rerun="agrees")[0] == "module: dynamic shapes"


def test_markdown_links_plots_written_beside_it(campaigns):
    found, _ = campaigns
    md = (found / "report.md").read_text()
    for heading in ("## Totals", "## Over time", "## Buckets"):
        assert heading in md
    links = re.findall(r"!\[[^\]]*\]\(([^)]+)\)", md)
    assert len(links) >= 4 and all((found / link).exists() for link in links)


def test_a_campaign_without_findings_says_so(campaigns):
    _, clean = campaigns
    page = (clean / "report.html").read_text()
    assert 'id="no-buckets"' in page and '<tr class="bucket"' not in page
    assert 'id="chart-cases-per-second"><svg' in page


def test_since_lists_new_and_gone_buckets_and_count_changes_first(campaigns, tmp_path):
    """Against PREV: one bucket only in the current run (new), one only in PREV (gone), one in both with
    another count. Both summaries are edited copies of one campaign (which files a single bucket)."""
    found, _ = campaigns
    cur, prev = tmp_path / "cur", tmp_path / "prev"
    shutil.copytree(found, cur)
    shutil.copytree(found, prev)
    edits = {}
    for folder in (cur, prev):
        summary = json.loads((folder / "summary.json").read_text())
        field = "buckets" if "buckets" in summary else "unique_findings"
        edits[folder] = (summary, field, "key" if field == "buckets" else "signature")
    summary, field, key = edits[cur]
    rows = summary[field]
    rows.append({**rows[0], key: "effects/lost-effect: appeared tonight @dynamo", "count": 1})
    (cur / "summary.json").write_text(json.dumps(summary))
    summary, field, key = edits[prev]
    rows = summary[field]
    rows[0]["count"] += 3
    rows.append({**rows[0], key: "outputs/wrong-value: fixed since @dynamo", "count": 2})
    (prev / "summary.json").write_text(json.dumps(summary))
    out = tmp_path / "report"
    assert main(["report", str(cur), "--since", str(prev), "--out", str(out)]) == 0
    page = (out / "report.html").read_text()
    assert page.index('id="changes"') < page.index('id="totals"')
    new = page.split('id="new-buckets"')[1].split("</ul>")[0]
    gone = page.split('id="gone-buckets"')[1].split("</ul>")[0]
    changed = page.split('id="count-changes"')[1].split("</ul>")[0]
    assert "appeared tonight" in new and "fixed since" in gone and "&rarr;" in changed
    assert "fixed since" not in new and "appeared tonight" not in gone


def test_several_campaigns_merge_into_one_report(campaigns, tmp_path):
    found, clean = campaigns
    assert main(["report", str(found), str(clean), "--out", str(tmp_path)]) == 0
    cases = sum(json.loads((d / "summary.json").read_text())["cases"] for d in campaigns)
    page = (tmp_path / "report.html").read_text()
    assert re.search(rf'id="total-cases"><b>{cases}</b>', page)


def test_bad_report_input_is_one_line_and_exit_2(tmp_path, capsys):
    assert main(["report", str(tmp_path / "missing")]) == 2
    assert main(["report", str(tmp_path), str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 2 and all(line.startswith("dynfuzz: error:") for line in err)


def test_dynamo_file_coverage_is_plotted_when_measured(campaigns, tmp_path):
    found, _ = campaigns
    shutil.copytree(found, tmp_path / "c")
    coverage = {"totals": {"files": 2, "lines": 300, "covered": 120, "percent": 40.0},
                "reachable": {"files": 1, "lines": 200, "covered": 100, "percent": 50.0},
                "files": {"torch/_dynamo/symbolic_convert.py": {"lines": 200, "covered": 100, "percent": 50.0},
                          "torch/_dynamo/guards.py": {"lines": 100, "covered": 20, "percent": 20.0}}}
    (tmp_path / "c" / "coverage.json").write_text(json.dumps(coverage))
    page = write_report([tmp_path / "c"])[0].read_text()
    chart = page.split('id="chart-dynamo-coverage"')[1].split("</figure>")[0]
    assert "symbolic_convert.py" in chart and "<svg" in chart and 'id="coverage-totals"' in page


def chromium() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser")


def render_in_chromium(page: Path, screenshot: Path) -> str:
    """The DOM Chromium built from the page (headless, offline), with a screenshot taken on the way."""
    with tempfile.TemporaryDirectory() as profile:
        done = subprocess.run(
            [chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
             "--disable-component-update", "--disable-sync", "--no-first-run", f"--user-data-dir={profile}",
             "--window-size=1280,2400", f"--screenshot={screenshot}", "--dump-dom", page.as_uri()],
            capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


@pytest.mark.slow
@pytest.mark.skipif(chromium() is None, reason="headless Chromium is not installed (Debian package chromium)")
def test_chromium_renders_both_reports_with_plots_and_one_row_per_bucket(campaigns, tmp_path):
    for folder in campaigns:
        shot = tmp_path / f"{folder.name}.png"
        dom = render_in_chromium(folder / "report.html", shot)
        assert shot.stat().st_size > 20_000  # a drawn page, not a blank one
        assert all(f'<section id="{s}">' in dom for s in SECTIONS)
        figures = re.findall(r'<figure class="chart" id="chart-([\w-]+)">(.*?)</figure>', dom, re.S)
        drawn = {name for name, body in figures if "<svg" in body and "<path" in body}
        assert {"cases-per-second", "buckets-over-time", "feature-coverage"} <= drawn
        rows = len(re.findall(r'<tr class="bucket"', dom))
        assert rows == len(buckets_of(folder))
        if folder.name == "found":
            assert rows > 0 and {"buckets-by-oracle", "buckets-by-layer", "buckets-by-tag"} <= drawn


def test_behaviours_reached_new_since_and_never_reached_are_shown(campaigns, tmp_path):
    """The coverage section shows behaviours per category against the reachable universe, behaviours
    against cases, those new since the earlier campaign, and the reachable ones never reached."""
    from dynfuzz.campaign.behaviour_log import BehaviourLog

    found, _ = campaigns
    logs = {"before": [("hop:cond", "guard:TYPE_MATCH")],
            "after": [("hop:cond", "guard:TYPE_MATCH"), ("hop:while_loop", "recompile:len(S) == #")]}
    for name, cases in logs.items():
        shutil.copytree(found, tmp_path / name)
        log = BehaviourLog()
        for i, case in enumerate(cases):
            log.add(case, float(i))
        summary = json.loads((tmp_path / name / "summary.json").read_text())
        summary["behaviours"] = log.summary()
        (tmp_path / name / "summary.json").write_text(json.dumps(summary))
    page_path, md_path = write_report([tmp_path / "after"], since=tmp_path / "before")
    page = page_path.read_text()
    table = page.split('id="behaviour-table"')[1].split("</table>")[0]
    assert re.search(r"<td>hop</td><td class=n>2</td>", table) and "<td>recompile</td><td class=n>1</td>" in table
    new = page.split('id="new-behaviours"')[1].split("</details>")[0]
    assert "hop:while_loop" in new and "recompile:len(S) == #" in new and "hop:cond" not in new
    never = page.split('id="never-reached"')[1]
    assert "scan" in never.split("hop:")[1].split("</details>")[0] and "cond," not in never
    assert "<svg" in page.split('id="chart-behaviours-over-cases"')[1].split("</figure>")[0]
    md = md_path.read_text()
    assert "| hop | 2 |" in md and "`hop:while_loop`" in md


def test_the_report_lists_miscompiles_first_whatever_the_counts(tmp_path):
    import json as _json

    from dynfuzz.report.data import merge

    buckets = [{"key": "refusal: heapq.heapify on list", "class": "refused", "tier": "refusal", "count": 9},
               {"key": "crash: raising KeyError in torch/x.py:f", "class": "crash", "tier": "crash", "count": 5},
               {"key": "miscompile: set-subclass", "class": "lost-effect", "tier": "miscompile", "count": 1}]
    (tmp_path / "summary.json").write_text(_json.dumps({"cases": 3, "seconds": 1, "buckets": buckets}))
    rows = merge([tmp_path]).rows
    assert [r.tier for r in rows] == ["miscompile", "crash", "refusal"]


def test_a_refusals_report_names_its_graph_break():
    from dynfuzz.oracles.model import Finding
    from dynfuzz.triage.issue import summary_lines

    def refusal(*details):
        return Finding("exceptions", "unsupported", "call 0: fullgraph compile refused: x", "s", details=details)

    lines = summary_lines(refusal("compiled: Unsupported: see .../gb/gb0123.html"), "refusal", "dynamo", {})
    assert "- **Graph break:** GB0123" in lines and "- **Component:** `module: graph breaks` (first diverging " \
        "layer: dynamo)" in lines
    lines = summary_lines(refusal("gb_type: Tensor.tolist() with non-integer tensor"), "refusal", None, {})
    assert "- **Graph break:** gb_type `Tensor.tolist() with non-integer tensor` (this torch printed no id)" in lines
    assert not any("Graph break" in line for line in summary_lines(refusal(), "crash", None, {}))



ALWAYS = """
import torch


def f(x):
    return x + 1 if torch.compiler.is_compiling() else x * 1


def inputs(device, call=0):
    return (torch.ones(3, device=device),)
"""


def test_a_failure_dynamic_false_removes_goes_to_dynamic_shapes():
    """Triage re-runs the minimized program with dynamic=False: a real dynamic-shapes bug (`3 in xs` False once
    the ints are dynamic) goes away, and the report names `module: dynamic shapes` and says why; a divergence
    that does not need symbolic sizes stays, and triage records it."""
    from dynfuzz.generators.case import Case
    from dynfuzz.paths import corpus_dir
    from dynfuzz.run.compilers import make_compiler
    from dynfuzz.run.judge import judge
    from dynfuzz.triage.issue import summary_lines
    from dynfuzz.triage.queue import triage_one
    from dynfuzz.triage.repro import read_program
    from dynfuzz.triage.repro_meta import split
    from dynfuzz.triage.triangulate import static_rerun, without_dynamic

    assert without_dynamic("def f(x):\n    return x\n").endswith("COMPILE_OPTIONS = {'dynamic': False}\n")
    assert "'dynamic': False" in without_dynamic("COMPILE_OPTIONS = {'dynamic': True}\n")
    assert without_dynamic("COMPILE_OPTIONS = {'export': 'strict'}\n") is None
    spec = CompileSpec()
    saved = read_program(corpus_dir() / "list_contains_dynamic_int.py")
    finding = next(f for f in judge(saved.case, make_compiler(spec), spec).findings if f.oracle == "outputs")
    assert static_rerun(saved.case, finding, spec) == "agrees"
    meta = {"static_rerun": "agrees", "layer": "dynamo"}
    lines = "\n".join(summary_lines(finding, "miscompile", "dynamo", meta))
    assert "`module: dynamic shapes`" in lines and "with dynamic=False it goes away" in lines, lines
    case = Case(ALWAYS)
    finding = judge(case, make_compiler(spec), spec).findings[0]
    t = triage_one(case, finding, spec, budget=30)
    assert split(t.repro)[1]["static_rerun"] == "reproduces"
