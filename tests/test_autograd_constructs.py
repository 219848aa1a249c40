"""Autograd and optimizers inside the compiled frame (generators/stdlib/autograd.py): a backward, an
`autograd.grad` or a hooked backward of a fresh leaf, under compiled autograd or `trace_autograd_ops` in a
share of cases; an optimizer step on a module-level parameter, with its learning rate changed between calls
at times.

Checked here: each tag has its share of the default mix, the programs run eagerly and hold their construct,
the compiled-autograd setting reaches `torch.compile` itself (it is read there, not while tracing), and
(slow) a short campaign finds each construct's Dynamo mutant, which survives with the construct switched off.
"""
from __future__ import annotations

import ast
import os
import subprocess
import sys
from collections import Counter
from functools import lru_cache

import pytest
from dynfuzz.generators import case_seed, draw_case
from dynfuzz.generators.fragments import DISABLE_ENV
from dynfuzz.mutants import ENV, load
from dynfuzz.run.execute import observe
from dynfuzz.sample import intended

from tests.test_stdlib import FAMILY_MUTANTS, family_trial, off_trial

TAGS = ("autograd-backward", "compiled-autograd", "trace-autograd-ops", "optimizer-step", "optimizer-lr-change")
# mutant -> (construct tag it needs, seed-0 stdlib cases that find it, with margin): the stdlib family's list
CAMPAIGNS = {m: FAMILY_MUTANTS[m] for m in ("compiled-autograd-double-accumulate", "optimizer-grad-source-swapped")}
NAMES = {
    "autograd-backward": {".backward", "torch.autograd.grad"},
    "compiled-autograd": {".backward", "torch.autograd.grad"},
    "trace-autograd-ops": {".backward", "torch.autograd.grad"},
    "optimizer-step": {".step"},
    "optimizer-lr-change": {".param_groups"},
}


@lru_cache(maxsize=1)
def mix():
    return tuple(draw_case(case_seed(47, i)) for i in range(600))


@lru_cache(maxsize=1)
def family():
    return tuple(draw_case(case_seed(48, i), ("stdlib",)) for i in range(300))


def test_each_tag_has_a_share_of_the_default_mix():
    counts = Counter(t for c in mix() for t in c.tags)
    for tag in TAGS:
        assert counts[tag] >= 0.01 * len(mix()), (tag, counts[tag])


def _referenced(source: str) -> set[str]:
    nodes = [n for n in ast.walk(ast.parse(source)) if isinstance(n, (ast.Name, ast.Attribute))]
    return {ast.unparse(n) for n in nodes} | {"." + n.attr for n in nodes if isinstance(n, ast.Attribute)}


def test_programs_hold_their_construct_and_run_eagerly():
    cases = [c for c in family() if set(TAGS) & set(c.tags)]
    assert len(cases) >= 30
    for case in cases:
        found = _referenced(case.source)
        for tag in TAGS:
            if tag in case.tags:
                assert found & NAMES[tag], (tag, case.source)
        assert ("compiled-autograd" in case.tags) == bool(case.dynamo_config.get("compiled_autograd"))
        assert ("trace-autograd-ops" in case.tags) == bool(case.dynamo_config.get("trace_autograd_ops"))
    bad = [c for c in cases if not intended(c, observe(c.source, c.entry, "cpu", None, "eager"))]
    assert not bad, bad[0].source if bad else ""


def test_compiled_autograd_reaches_torch_compile(tmp_path):
    """`compiled_autograd` is read when torch.compile builds its wrapper: a program that sets it must have
    its backward traced by compiled autograd, in the harness and in the rendered repro alike. The mutant
    only changes what compiled autograd captures, so the harness sees a divergence only if it is on."""
    case = next(c for c in family() if "compiled-autograd" in c.tags and ".backward()" in c.source)
    script = tmp_path / "case.py"
    script.write_text(case.source)
    env = {k: v for k, v in os.environ.items() if k not in (ENV, DISABLE_ENV)}
    cmd = [sys.executable, "-m", "dynfuzz", "check", str(script), "--mutant", "compiled-autograd-double-accumulate"]
    out = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300).stdout
    assert "[outputs/miscompile]" in out, out


def test_each_mutant_names_its_construct():
    registry = load()
    for name, (construct, _) in CAMPAIGNS.items():
        assert registry[name].construct == construct


@pytest.mark.slow
@pytest.mark.parametrize("mutant", sorted(CAMPAIGNS))
def test_a_short_campaign_finds_the_mutant(trial, mutant):
    assert family_trial(trial, mutant).finds(mutant, CAMPAIGNS[mutant][0])


@pytest.mark.slow
@pytest.mark.parametrize("mutant", sorted(CAMPAIGNS))
def test_without_its_construct_the_mutant_survives(trial, mutant):
    assert not off_trial(trial, mutant).finds(mutant)
