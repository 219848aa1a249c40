"""Packaging: one top-level name (`dynfuzz`) in site-packages, no module imported under two names, and
`import dynfuzz` giving the public API."""
from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
FOLDER_NAMES = ("generators", "harness", "oracles", "reference_impl")


def test_no_module_is_imported_under_its_folder_name_in_this_process():
    """Under pytest (repo root on sys.path) nothing imported `generators.x` beside `dynfuzz.generators.x`,
    which would duplicate the fragment, double and oracle registries."""
    import dynfuzz.campaign.campaign  # noqa: F401
    import dynfuzz.cli  # noqa: F401

    clashing = sorted(m for m in sys.modules if m.split(".")[0] in FOLDER_NAMES)
    assert clashing == []


def test_importing_everything_registers_each_module_once():
    code = """
import importlib, pkgutil, sys
import dynfuzz
for info in pkgutil.walk_packages(dynfuzz.__path__, "dynfuzz."):
    if info.name.startswith("dynfuzz.doubles") or ".__main__" in info.name:
        continue
    try:
        importlib.import_module(info.name)
    except ImportError as e:  # an optional dependency (ray, redis) absent here
        print("optional", info.name, e, file=sys.stderr)
files = {}
for name, mod in list(sys.modules.items()):
    f = getattr(mod, "__file__", None)
    if f and "/site-packages/" not in f and "/lib/python" not in f:
        files.setdefault(f, []).append(name)
dupes = {f: n for f, n in files.items() if len(n) > 1}
print(sorted(m for m in sys.modules if m.split(".")[0] in %r))
print(dupes)
""" % (FOLDER_NAMES,)
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert r.returncode == 0, r.stderr
    folder_modules, dupes = r.stdout.strip().splitlines()[-2:]
    assert folder_modules == "[]"
    assert dupes == "{}"


def test_import_dynfuzz_gives_the_public_api():
    import dynfuzz

    for name in ("programs", "check", "minimize", "Campaign"):
        assert getattr(dynfuzz, name) is not None, name


@pytest.mark.slow
def test_the_wheel_claims_only_dynfuzz(tmp_path):
    r = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
                        "-w", str(tmp_path), str(ROOT)], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    (wheel,) = tmp_path.glob("dynfuzz-*.whl")
    top = {name.split("/")[0] for name in zipfile.ZipFile(wheel).namelist()}
    assert {t for t in top if not t.endswith(".dist-info")} == {"dynfuzz"}, top
    names = zipfile.ZipFile(wheel).namelist()
    for sub in ("generators", "oracles", "reference_impl", "run", "triage"):
        assert f"dynfuzz/{sub}/__init__.py" in names, sub
