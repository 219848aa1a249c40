"""Issue 14, constructs 5-8: each Dynamo mutant is found by a short campaign of its construct's family,
and survives the same campaign with the construct switched off (so the construct is what finds it).

Campaigns run in a subprocess: a mutant patches torch for the whole process, and must not leak into
the rest of the test session.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from dynfuzz.generators.fragments import DISABLE_ENV


def campaign(tmp_path: Path, family: str, cases: int, seed: int, mutant: str, disable: str = "") -> dict:
    out = tmp_path / ("off" if disable else "on")
    env = {**os.environ, DISABLE_ENV: disable}
    env.pop("DYNFUZZ_MUTANTS", None)
    cmd = [sys.executable, "-m", "dynfuzz", "fuzz", "--family", family, "--cases", str(cases), "--seed", str(seed),
           "--workers", "0", "--no-db", "--no-progress", "--budget", "5m", "--out", str(out)]
    cmd += ["--mutant", mutant] if mutant else []
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode in (0, 1), proc.stderr[-2000:]
    return json.loads((out / "summary.json").read_text())


def wrong_values(summary: dict) -> list[dict]:
    """Findings that are a silently wrong result (never a crash or a refusal)."""
    return [u for u in summary["unique_findings"] if u["oracle"] in ("outputs", "effects")]


@pytest.mark.slow
def test_unbacked_guard_mutant_is_found_by_the_unbacked_construct_only(tmp_path):
    found = wrong_values(campaign(tmp_path, "conds", 30, 1, "unbacked-guard-assumed-true"))
    assert found, "a campaign with capture_scalar_outputs programs must see the unguarded branch"
    assert not wrong_values(campaign(tmp_path, "conds", 30, 1, "unbacked-guard-assumed-true",
                                     disable="unbacked-config"))


def recall_divergences(summary: dict) -> list[dict]:
    """Divergences that first show on a re-call: what a missing guard produces (the resizes family also
    finds known torch bugs on the first call, with or without a mutant)."""
    return [u for u in summary["unique_findings"] if u["oracle"] in ("outputs", "effects", "exceptions")
            and not u["message"].startswith("call 0")]


@pytest.mark.slow
def test_inner_stride_only_mutant_is_found_by_the_layout_construct_only(tmp_path):
    """Step slices and expands change outer strides only: nothing but the layout construct re-calls so."""
    assert recall_divergences(campaign(tmp_path, "resizes", 40, 1, "layout-inner-stride-only"))
    assert not recall_divergences(campaign(tmp_path, "resizes", 40, 1, "layout-inner-stride-only",
                                           disable="layout"))


OLDER_RESIZES = "out-variant,metadata-op,data-op"  # they find known torch bugs on unmodified torch


def unmutated(tmp_path: Path, family: str, cases: int, seed: int, disable: str) -> dict:
    return campaign(tmp_path / "unmutated", family, cases, seed, "", disable)


@pytest.mark.slow
def test_out_resize_names_only_mutant_is_found_by_out_alias_reads(tmp_path):
    """Reading an `out=`-resized tensor through a list, dict or attribute sees the stale shape; on
    unmodified torch the same campaign finds nothing."""
    found = wrong_values(campaign(tmp_path, "resizes", 40, 3, "out-resize-names-only", OLDER_RESIZES))
    assert found
    assert not wrong_values(unmutated(tmp_path, "resizes", 40, 3, OLDER_RESIZES))


@pytest.mark.slow
def test_cond_closure_mutant_is_found_by_the_cond_closures_construct_only(tmp_path):
    assert wrong_values(campaign(tmp_path, "conds", 20, 4, "cond-closure-by-metadata"))
    assert not wrong_values(campaign(tmp_path, "conds", 20, 4, "cond-closure-by-metadata", disable="cond-closures"))
