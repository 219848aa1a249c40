"""Issue 14's Dynamo mutants for constructs 1-4: a short campaign of the construct's family finds each one,
and with the construct switched off the same campaign does not (bench/mutants.py measures all four).

Each campaign runs in its own `dynfuzz fuzz` process: a mutant patches torch for the whole process tree
(`--mutant` exports DYNFUZZ_MUTANTS to the spawned worker), and must never leak into the test process.
A finding is the mutant's when its saved standalone repro fails with the mutant applied and passes on
unmodified torch (`mutant_finding`): comparing bucket lists of two campaigns instead would be noisy,
since a real torch bug can be filed under a different bucket name from one run to the next.
The `order-reinsert` fragment is off in effects campaigns: it reaches two known torch bugs
(corpus/attr_del_readd_order_lost.py, corpus/odict_move_to_end_arg_lost.py) whose buckets would absorb
the attribute-order mutant's findings.
"""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from dynfuzz.generators.fragments import DISABLE_ENV
from dynfuzz.mutants import ENV, load
from dynfuzz.triage.repro import read_program

# mutant -> (family, construct tag, cases): a seed-0 campaign that finds it, with margin
CAMPAIGNS = {
    "cell-by-contents": ("closures", "cells-agree", 60),
    "cell-by-name": ("closures", "preexisting-cells", 20),
    "subscript-write-unmarked": ("effects", "sole-mutation", 40),
    "attr-replay-reversed": ("effects", "order-state", 30),
}
# Switching a construct off also switches off its sibling construct of the same family, so that neither can
# stand in for the other.
OFF = {"closures": "cells-agree,preexisting-cells", "effects": "sole-mutation,order-state"}
ALWAYS_OFF = {"closures": "", "effects": "order-reinsert"}
RUN_WITH_MUTANT = ("import sys, runpy; from dynfuzz.mutants import apply; "
                   "apply([sys.argv[1]]); runpy.run_path(sys.argv[2])")


def campaign(out: Path, mutant: str, cases: int, family: str, disable: str = "") -> list[Path]:
    """Run a seed-0 campaign under `mutant` in a fresh process; the repro of every bucket it saved."""
    env = {**os.environ, DISABLE_ENV: ",".join(filter(None, (disable, ALWAYS_OFF.get(family, ""))))}
    env.pop(ENV, None)
    cmd = [sys.executable, "-m", "dynfuzz", "fuzz", "--cases", str(cases), "--family", family, "--workers", "1",
           "--seed", "0", "--no-db", "--no-progress", "--no-minimize", "--budget", "600s", "--out", str(out),
           "--mutant", mutant]
    subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=900)
    return sorted(out.glob("findings/*/repro.py"))


def _fails(repro: Path, mutant: str | None) -> bool:
    env = {k: v for k, v in os.environ.items() if k not in (ENV, DISABLE_ENV)}
    cmd = [sys.executable, "-c", RUN_WITH_MUTANT, mutant, str(repro)] if mutant else [sys.executable, str(repro)]
    return subprocess.run(cmd, env=env, capture_output=True, timeout=300).returncode == 1


def mutant_finding(repros: list[Path], mutant: str, construct: str | None,
                   oracles: tuple[str, ...] = ("outputs", "effects")) -> Path | None:
    """The first value or state finding (or one of `oracles`; on a program tagged `construct`, if given) whose
    repro fails under the mutant and passes on unmodified torch."""
    for path in repros:
        meta = read_program(path).meta
        if meta.get("oracle") in oracles and (construct is None or construct in meta.get("tags", ())) \
                and _fails(path, mutant) and not _fails(path, None):
            return path
    return None


def test_every_mutant_names_its_construct():
    registry = load()
    for name, (_, construct, _) in CAMPAIGNS.items():
        assert registry[name].construct == construct
        assert registry[name].layer == "dynamo"


@pytest.mark.slow
@pytest.mark.parametrize("mutant", sorted(CAMPAIGNS))
def test_a_short_campaign_of_the_construct_finds_the_mutant(tmp_path, mutant):
    family, construct, cases = CAMPAIGNS[mutant]
    assert mutant_finding(campaign(tmp_path / "on", mutant, cases, family), mutant, construct) is not None


@pytest.mark.slow
def test_without_its_construct_the_mutant_survives(tmp_path):
    """The closing-note claim on one mutant: with cells-agree and preexisting-cells off, the cell-by-name
    campaign saves no finding that unmodified torch does not also fail."""
    family, _, cases = CAMPAIGNS["cell-by-name"]
    repros = campaign(tmp_path / "off", "cell-by-name", cases, family, disable=OFF[family])
    assert mutant_finding(repros, "cell-by-name", None) is None
