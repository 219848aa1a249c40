"""`dynfuzz merge DIR... --out OUT`: counts add, the longest run sets the seconds, rates and fractions are
recomputed, findings are united by key."""
from __future__ import annotations

import json

from dynfuzz.campaign.campaign import Campaign, CampaignConfig
from dynfuzz.cli import main
from dynfuzz.merge import merge_summaries
from dynfuzz.run.compilers import CompileSpec


def _summary(cases, seconds, eager_errors, torch_seconds, findings, nodes):
    return {"torch": "2.13.0", "backend": "eager", "seed": 0, "workers": 2, "seconds": seconds, "cases": cases,
            "cases_per_second": cases / seconds, "eager_errors": eager_errors, "torch_seconds": torch_seconds,
            "valid_fraction": 1 - eager_errors / cases, "overhead_fraction": 0.5, "findings": sum(findings.values()),
            "by_kind": {"miscompile": sum(findings.values())}, "nodes": nodes, "shard": [1, 2],
            "mean_timings": {"eager": 0.01},
            "unique_findings": [{"signature": s, "kind": "miscompile", "count": c} for s, c in findings.items()],
            "unique": len(findings)}


def test_counts_add_fractions_are_recomputed_and_findings_united():
    a = _summary(100, 50.0, 10, 40.0, {"s1": 3, "s2": 1}, {"10.0.0.1": 100})
    b = _summary(300, 100.0, 30, 150.0, {"s2": 5, "s3": 2}, {"10.0.0.2": 300})
    b["mean_timings"] = {"eager": 0.03}
    m = merge_summaries([a, b])
    assert m["cases"] == 400 and m["findings"] == 11 and m["by_kind"] == {"miscompile": 11}
    assert m["seconds"] == 100.0 and m["cases_per_second"] == 4.0
    assert m["valid_fraction"] == 0.9 and m["workers"] == 4
    assert m["overhead_fraction"] == round(1 - 190 / (50 * 2 + 100 * 2), 4)
    assert m["mean_timings"] == {"eager": round((0.01 * 100 + 0.03 * 300) / 400, 5)}
    assert m["nodes"] == {"10.0.0.1": 100, "10.0.0.2": 300}
    assert {u["signature"]: u["count"] for u in m["unique_findings"]} == {"s1": 3, "s2": 6, "s3": 2}
    assert m["unique"] == 3 and m["torch"] == "2.13.0" and m["runs"] == 2


def test_buckets_are_united_by_key_and_bugs_recounted():
    def bucket(key, cls, count, sigs, first):
        return {"key": key, "class": cls, "count": count, "signatures": sigs, "status": "unminimized",
                "first_seen_seconds": first}

    a = {"cases": 1, "seconds": 1.0, "bugs": 1, "buckets": [bucket("k1", "wrong-value", 3, ["s1"], 5.0)]}
    b = {"cases": 1, "seconds": 1.0, "bugs": 1, "buckets": [bucket("k1", "wrong-value", 2, ["s2"], 2.0),
                                                            bucket("k2", "internal-error", 1, ["s3"], 1.0)]}
    m = merge_summaries([a, b])
    by_key = {x["key"]: x for x in m["buckets"]}
    assert set(by_key) == {"k1", "k2"} and by_key["k1"]["count"] == 5
    assert by_key["k1"]["signatures"] == ["s1", "s2"] and by_key["k1"]["first_seen_seconds"] == 2.0
    assert m["bugs"] == 1  # the internal-error bucket is never a torch bug


def test_a_bucket_flaky_in_one_shard_and_reproduced_in_another_is_a_bug():
    flaky = {"key": "k1", "class": "wrong-value", "count": 1, "signatures": ["s1"], "status": "flaky",
             "verdict": "flaky", "repro": "a/findings/x/repro.py", "note": "did not diverge again when re-run"}
    confirmed = dict(flaky, status="ok", verdict="reproduces", repro="b/findings/x/repro.py", note=None)
    for order in ([flaky, confirmed], [confirmed, flaky]):
        m = merge_summaries([{"cases": 1, "seconds": 1.0, "bugs": 0, "buckets": [order[0]]},
                             {"cases": 1, "seconds": 1.0, "bugs": 1, "buckets": [order[1]]}])
        (bucket,) = m["buckets"]
        assert bucket["status"] == "ok" and bucket["verdict"] == "reproduces" and bucket["count"] == 2
        assert bucket["repro"] == "b/findings/x/repro.py" and bucket["note"] is None
        assert m["bugs"] == 1


def test_differing_lists_are_united_not_nested():
    a = {"cases": 1, "seconds": 1.0, "families": ["closures"],
         "harness_error_records": [{"kind": "snapshot", "seed": 1}]}
    b = {"cases": 1, "seconds": 1.0, "families": ["conds"], "harness_error_records": [{"kind": "oracle", "seed": 2}]}
    m = merge_summaries([a, b])
    assert m["families"] == ["closures", "conds"]
    assert m["harness_error_records"] == [{"kind": "snapshot", "seed": 1}, {"kind": "oracle", "seed": 2}]
    assert merge_summaries([a, dict(a)])["families"] == ["closures"]


def test_merge_of_two_shards_on_the_command_line(tmp_path, capsys):
    runs = []
    for i in (1, 2):
        out = tmp_path / f"shard{i}"
        config = CampaignConfig(budget=60, out=out, spec=CompileSpec(compiler="perturb-output"),
                                families=("basic",), max_cases=3, progress=False, workers=0, shard=(i, 2))
        runs.append(Campaign(config).run())
    assert main(["merge", str(tmp_path / "shard1"), str(tmp_path / "shard2"), "--out", str(tmp_path / "all")]) == 0
    merged = json.loads((tmp_path / "all" / "summary.json").read_text())
    assert merged["cases"] == 6 and merged["findings"] == sum(r["findings"] for r in runs)
    keys = {(u["signature"], u["cheap_key"]) for r in runs for u in r["unique_findings"]}
    assert {(u["signature"], u["cheap_key"]) for u in merged["unique_findings"]} == keys
    assert merged["unique"] == len(keys)
    assert merged["shards"] == [[1, 2], [2, 2]]
    assert {b["key"] for b in merged["buckets"]} == {b["key"] for r in runs for b in r["buckets"]}
    for u in merged["unique_findings"]:
        assert u["file"] is None or (tmp_path / "all" / u["file"]).is_file()  # relative to the merged OUT
    assert list((tmp_path / "all" / "findings").iterdir())


def test_merge_of_a_folder_without_a_summary_is_a_usage_error(tmp_path, capsys):
    assert main(["merge", str(tmp_path), "--out", str(tmp_path / "m")]) == 2
    assert "no summary.json" in capsys.readouterr().err
