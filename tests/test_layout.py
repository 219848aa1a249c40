"""The layout is a contract too: moving a module must not change what a seed draws, and every module's
import path follows from its folder by one rule (README, "Layout")."""
from __future__ import annotations

import hashlib
import json
from pathlib import Path

import hypothesis
import pytest
from dynfuzz.generators.case import case_seed, draw_case, redraw

ROOT = Path(__file__).resolve().parents[1]
DIGESTS = json.loads((ROOT / "tests" / "data" / "case_digests.json").read_text())


def digest(case) -> str:
    """What a drawn case is, in 16 hex digits: its program texts, entry, tags, intended error and settings."""
    parts = [case.source, case.eager_source or "", case.entry, ",".join(sorted(case.tags)),
             case.intended_error or "", repr(case.dynamo_config_items)]
    return hashlib.sha256("\x00".join(parts).encode()).hexdigest()[:16]


def test_recorded_choice_sequences_redraw_the_recorded_programs():
    """Independent of the Hypothesis release: the fragment registry (its order, weights and draws) is what it
    was when the digests were recorded, so every recorded choice sequence redraws its program byte for byte."""
    changed = [i for i, (choices, want) in enumerate(zip(DIGESTS["choices"], DIGESTS["digests"]))
               if digest(redraw(tuple(choices))) != want]
    assert changed == [], f"{len(changed)} of {len(DIGESTS['digests'])} programs changed, first at index {changed[:5]}"


@pytest.mark.skipif(hypothesis.__version__ != DIGESTS["hypothesis"],
                    reason=f"digests were recorded under Hypothesis {DIGESTS['hypothesis']}; a seed draws other "
                           f"choices under Hypothesis {hypothesis.__version__} (the redraw test still runs)")
def test_seeds_draw_the_recorded_programs():
    """`case_seed(0, i)` for i < 3000, default mix: the same program as before the generators moved into
    family packages (the gate, shards, resume and the example database rely on a seed's program)."""
    changed = [i for i, want in enumerate(DIGESTS["digests"]) if digest(draw_case(case_seed(0, i))) != want]
    assert changed == [], f"{len(changed)} seeds draw other programs, first at index {changed[:5]}"
