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


# The one rule for import paths (README, "Layout"): the folder `harness/` is the package `dynfuzz` itself, and
# the other stages are its subpackages under their folder names.
PACKAGE_ROOTS = {"harness": "dynfuzz", "generators": "dynfuzz.generators", "oracles": "dynfuzz.oracles",
                 "reference_impl": "dynfuzz.reference_impl"}


def _modules() -> list[tuple[str, Path]]:
    found = []
    for folder, package in PACKAGE_ROOTS.items():
        for path in sorted((ROOT / folder).rglob("*.py")):
            parts = path.relative_to(ROOT / folder).with_suffix("").parts
            if parts[-1] == "__init__":
                parts = parts[:-1]
            found.append((".".join((package, *parts)), path))
    return found


def test_every_module_imports_under_the_path_its_folder_gives():
    import importlib

    wrong = []
    for name, path in _modules():
        if name.endswith("__main__"):
            continue
        try:
            module = importlib.import_module(name)
        except ImportError as e:  # an optional extra (ray, redis) absent: the name still resolved to the file
            if getattr(e, "name", "") in ("ray", "redis"):
                continue
            raise
        if Path(module.__file__).resolve() != path.resolve():
            wrong.append((name, module.__file__, str(path)))
    assert wrong == []


def test_the_wheel_lists_every_package_folder():
    import tomllib

    listed = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    folders = {name for name, path in _modules() if path.name == "__init__.py"}
    assert folders == listed, {"unlisted": sorted(folders - listed), "stale": sorted(listed - folders)}


def test_module_names_repeat_only_where_they_mirror():
    """Two modules of one name do two jobs only where the name is a mirror on purpose: `doubles/` and `mutants/`
    are named after the oracle or family they break, and a family package's helpers after their topic."""
    seen: dict[str, list[str]] = {}
    for name, path in _modules():
        if path.name == "__init__.py" or name.startswith(("dynfuzz.doubles.", "dynfuzz.mutants.")):
            continue
        if name.count(".") >= 3 and name.startswith("dynfuzz.generators."):
            continue  # inside a family package: named by topic within the family
        seen.setdefault(path.stem, []).append(name)
    assert {stem: names for stem, names in seen.items() if len(names) > 1} == {}
