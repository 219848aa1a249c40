"""Issue 14's Dynamo mutants for constructs 1-4: a short campaign of the construct's family finds each one,
and with the family's constructs switched off the same campaign does not (bench/mutants.py measures them).

The campaigns are mutant trials (dynfuzz.mutants.trials, through the session-shared `trial` fixture of
conftest.py): each runs in its own `dynfuzz fuzz` process (a mutant patches torch for the whole process tree
and must never leak into the test process), must end with exit 0 or 1 having judged every case, and a finding
is a mutant's when its saved standalone repro fails with that mutant alone applied and passes on unmodified
torch. A family's mutants share one trial with the constructs on and one with them off: the mutants are
told apart by that check, and the constructs switched off are the same for both mutants of a family.
The `order-reinsert` fragment is off in effects campaigns: it reaches two known torch bugs
(corpus/attr_del_readd_order_lost.py, corpus/odict_move_to_end_arg_lost.py) whose buckets would absorb
the attribute-order mutant's findings.
"""
from __future__ import annotations

import pytest
from dynfuzz.mutants import load

# mutant -> (family, construct tag): each found by a seed-0 trial of its family of CASES[family] cases
CAMPAIGNS = {
    "cell-by-contents": ("closures", "cells-agree"),
    "cell-by-name": ("closures", "preexisting-cells"),
    "subscript-write-unmarked": ("effects", "sole-mutation"),
    "attr-replay-reversed": ("effects", "order-state"),
}
CASES = {"closures": 60, "effects": 80}  # both effects mutants are found within 80 cases of the current mix
# Switching a construct off also switches off its sibling constructs of the same family, so that none can
# stand in for it: the field constructs of closures (cells-shadow, preexisting-writer, maker-closure) reach
# the cell mutants too.
OFF = {"closures": "cells-agree,preexisting-cells,cells-shadow,preexisting-writer,maker-closure",
       "effects": "sole-mutation,order-state"}
ALWAYS_OFF = {"closures": "", "effects": "order-reinsert"}


def family_trial(trial, family: str, off: bool = False):
    """The seed-0 trial of `family` under all of its mutants, its constructs on (or `off`)."""
    mutants = [m for m, (f, _) in CAMPAIGNS.items() if f == family]
    return trial(mutants, family, CASES[family], disable=[ALWAYS_OFF[family]] + ([OFF[family]] if off else []))


def test_every_mutant_names_its_construct():
    registry = load()
    for name, (_, construct) in CAMPAIGNS.items():
        assert registry[name].construct == construct
        assert registry[name].layer == "dynamo"


@pytest.mark.slow
@pytest.mark.parametrize("mutant", sorted(CAMPAIGNS))
def test_a_short_campaign_of_the_construct_finds_the_mutant(trial, mutant):
    family, construct = CAMPAIGNS[mutant]
    assert family_trial(trial, family).finds(mutant, construct)


@pytest.mark.slow
@pytest.mark.parametrize("mutant", sorted(CAMPAIGNS))
def test_without_its_construct_the_mutant_survives(trial, mutant):
    """With the family's constructs off, the same campaign saves no finding the mutant owes."""
    family, _ = CAMPAIGNS[mutant]
    off = family_trial(trial, family, off=True)
    assert off.cases == CASES[family] and not off.finds(mutant)
