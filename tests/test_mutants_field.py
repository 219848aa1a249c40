"""The field constructs' Dynamo mutants (issue 30): a short seed-0 campaign of the construct's family finds each
one, and the same campaign with the construct switched off does not.

A finding is the mutant's when its saved repro fails with the mutant applied and passes on unmodified torch
(`Trial.finds`, as for the cells mutants): these constructs also reach real torch 2.13 bugs (kept in corpus/),
which fail both ways and so never count. Each campaign is a trial (dynfuzz.mutants.trials, the `trial`
fixture) in its own `dynfuzz fuzz` process: a mutant patches torch for the whole process tree and must not
leak into the test session.
"""
from __future__ import annotations

import pytest
from dynfuzz.mutants import load

FOUND_BY = ("outputs", "effects")
# mutant -> (family, construct tag, cases, oracles its finding shows in)
CAMPAIGNS = {
    "cell-shadow-merged": ("closures", "cells-shadow", 30, FOUND_BY),
    "sourceless-cell-snapshot": ("closures", "preexisting-writer", 120, FOUND_BY),
    "freevar-by-local-name": ("closures", "maker-closure", 80, FOUND_BY),
    "cond-unbacked-output-sizes-equated": ("conds", "cond-unbacked-branches", 60, ("exceptions",)),
    "inplace-arg-rebinds": ("effects", "inplace-arg", 40, FOUND_BY),
    "super-mutator-dropped-under-fullgraph": ("effects", "subclass-super-fullgraph", 60, FOUND_BY),
    "set-names-only": ("resizes", "set-alias", 80, FOUND_BY + ("exceptions",)),
}
# Switched off with the construct: its siblings of the same family that could stand in for it. The effects
# container fragment also draws an augmented assignment on a container argument (`c0 &= {...}` on a set
# argument), which is the inplace-arg mutant's target.
SIBLINGS = {
    "closures": "cells-agree,preexisting-cells,cells-shadow,preexisting-writer,maker-closure",
}
ALSO_OFF = {"inplace-arg-rebinds": "container"}


def test_every_field_mutant_names_its_construct():
    registry = load()
    for name, (_, construct, _, _) in CAMPAIGNS.items():
        assert registry[name].construct == construct
        assert registry[name].layer == "dynamo"


@pytest.mark.slow
@pytest.mark.parametrize("mutant", sorted(CAMPAIGNS))
def test_a_short_campaign_of_the_construct_finds_the_mutant(trial, mutant):
    family, construct, cases, oracles = CAMPAIGNS[mutant]
    assert trial(mutant, family, cases).finds(mutant, construct, oracles)


@pytest.mark.slow
@pytest.mark.parametrize("mutant", sorted(CAMPAIGNS))
def test_without_its_construct_the_mutant_survives(trial, mutant):
    """The same campaign with the construct (and its siblings that could stand in) off saves no finding the
    mutant owes, having judged every case."""
    family, construct, cases, oracles = CAMPAIGNS[mutant]
    off = trial(mutant, family, cases, disable=",".join(filter(None, (SIBLINGS.get(family, construct),
                                                                      ALSO_OFF.get(mutant)))))
    assert off.cases == cases and not off.finds(mutant, None, oracles)
