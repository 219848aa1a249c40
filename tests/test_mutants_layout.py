"""Issue 14, constructs 5-8: each Dynamo mutant is found by a short campaign of its construct's family,
and survives the same campaign with the construct switched off (so the construct is what finds it).

Campaigns are mutant trials (dynfuzz.mutants.trials, through the session-shared `trial` fixture): each in a
process of its own (a mutant patches torch for the whole process and must not leak into the rest of the test
session), ending with exit 0 or 1 after every case it was asked for.
"""
from __future__ import annotations

import pytest


def campaign(trial, family: str, cases: int, seed: int, mutant: str, disable: str = "") -> dict:
    """The summary of a trial of `family` under `mutant` (none: unmodified torch), constructs `disable` off."""
    return trial([mutant] if mutant else [], family, cases, seed=seed, disable=disable).summary


def wrong_values(summary: dict) -> list[dict]:
    """Findings that are a silently wrong result (never a crash or a refusal)."""
    return [u for u in summary["unique_findings"] if u["oracle"] in ("outputs", "effects")]


@pytest.mark.slow
def test_unbacked_guard_mutant_is_found_by_the_unbacked_construct_only(trial):
    found = wrong_values(campaign(trial, "conds", 60, 1, "unbacked-guard-assumed-true"))
    assert found, "a campaign with capture_scalar_outputs programs must see the unguarded branch"
    # cond-unbacked-branches draws capture_scalar_outputs too
    assert not wrong_values(campaign(trial, "conds", 60, 1, "unbacked-guard-assumed-true",
                                     disable="unbacked-config,cond-unbacked-branches"))


def recall_divergences(summary: dict) -> list[dict]:
    """Divergences that first show on a re-call: what a missing guard produces (the resizes family also
    finds known torch bugs on the first call, with or without a mutant)."""
    return [u for u in summary["unique_findings"] if u["oracle"] in ("outputs", "effects", "exceptions")
            and not u["message"].startswith("call 0")]


@pytest.mark.slow
def test_inner_stride_only_mutant_is_found_by_the_layout_construct_only(trial):
    """Step slices and expands change outer strides only: nothing but the layout construct re-calls so."""
    assert recall_divergences(campaign(trial, "resizes", 40, 1, "layout-inner-stride-only"))
    assert not recall_divergences(campaign(trial, "resizes", 40, 1, "layout-inner-stride-only",
                                           disable="layout"))


OLDER_RESIZES = "out-variant,metadata-op,data-op"  # they find known torch bugs on unmodified torch


def unmutated(trial, family: str, cases: int, seed: int, disable: str) -> dict:
    return campaign(trial, family, cases, seed, "", disable)


@pytest.mark.slow
def test_out_resize_names_only_mutant_is_found_by_out_alias_reads(trial):
    """Reading an `out=`-resized tensor through a list, dict or attribute sees the stale shape; on
    unmodified torch the same campaign finds nothing."""
    found = wrong_values(campaign(trial, "resizes", 40, 3, "out-resize-names-only", OLDER_RESIZES))
    assert found
    assert not wrong_values(unmutated(trial, "resizes", 40, 3, OLDER_RESIZES))


@pytest.mark.slow
def test_cond_closure_mutant_is_found_by_the_cond_closures_construct_only(trial):
    assert wrong_values(campaign(trial, "conds", 20, 4, "cond-closure-by-metadata"))
    assert not wrong_values(campaign(trial, "conds", 20, 4, "cond-closure-by-metadata", disable="cond-closures"))
