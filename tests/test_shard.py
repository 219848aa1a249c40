"""`--shard I/N`: the N shards of one seed never draw the same program, together draw what one unsharded run
draws, and bad shard specs are one-line usage errors."""
from __future__ import annotations

import pytest
from dynfuzz.campaign.campaign import Campaign, CampaignConfig
from dynfuzz.cli import main
from dynfuzz.generators.case import case_seed
from dynfuzz.run.compilers import CompileSpec


def test_shards_partition_the_seed_stream():
    n, per_shard = 3, 50
    shards = [{case_seed(7, k, (i, n)) for k in range(per_shard)} for i in range(1, n + 1)]
    assert all(len(s) == per_shard for s in shards)
    assert not (shards[0] & shards[1] or shards[0] & shards[2] or shards[1] & shards[2])
    assert set().union(*shards) == {case_seed(7, k) for k in range(n * per_shard)}
    assert [case_seed(7, k, (1, 1)) for k in range(5)] == [case_seed(7, k) for k in range(5)]


def test_a_sharded_campaign_draws_its_share_of_the_seeds(tmp_path):
    config = CampaignConfig(budget=60, out=tmp_path, spec=CompileSpec(compiler="identity"), families=("basic",),
                            max_cases=3, progress=False, workers=0, seed=5, shard=(2, 4))
    campaign = Campaign(config)
    seeds = [campaign._next_case().seed for _ in range(3)]
    assert seeds == [case_seed(5, k * 4 + 1) for k in range(3)]
    summary = Campaign(config).run()
    assert summary["cases"] == 3 and summary["shard"] == [2, 4]


@pytest.mark.parametrize("shard", ["3/2", "x", "0/2", "1/0", "2"])
def test_a_bad_shard_is_a_one_line_usage_error(shard, tmp_path, capsys):
    assert main(["fuzz", "--shard", shard, "--cases", "1", "--no-db", "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "--shard" in err


@pytest.mark.parametrize("flag", [["--coverage"], ["--guided"], ["--coverage-scope", "torch._inductor"]])
def test_coverage_is_refused_with_a_shard(flag, tmp_path, capsys):
    """docs/coverage.md: coverage and guidance measure a whole campaign; a shard's lines are a part no merge unites."""
    assert main(["fuzz", "--shard", "1/2", *flag, "--cases", "1", "--no-db", "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "--shard" in err
