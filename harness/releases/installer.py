"""How a release environment is built: a virtual environment, torch at one release, dynfuzz's runtime
dependencies, and this checkout installed editable (so a repro is judged by the same dynfuzz on every release).

`PipInstaller` uses the interpreter running dynfuzz and this machine's pip configuration (its index, mirrors
and constraints), with `--no-cache-dir`: a CUDA build of torch is 5 GB or more, and a second copy in pip's
cache would double that. `adopt` layers a small environment over an existing one that already holds the
release (a `.pth` file names its site-packages), so a machine with torch installed elsewhere does not download
it again. Tests inject their own installer with the same three methods (`environments.Installer`).
"""
from __future__ import annotations

import json
import re
import subprocess
import sys
import tomllib
from pathlib import Path

ADOPTED_PTH = "_dynfuzz_adopted.pth"
_VERSION = re.compile(r"^\d+(\.\d+){1,2}$")
_QUERY = ("import json, sys, sysconfig, torch; print(json.dumps({'torch': torch.__version__, "
          "'python': '%d.%d' % sys.version_info[:2], 'site': sorted({sysconfig.get_paths()['purelib'], "
          "sysconfig.get_paths()['platlib']})}))")


class InstallError(Exception):
    """A release environment could not be built; the message is one line saying why."""


def venv_python(venv: Path) -> Path:
    return venv / "bin" / "python"


def requirements(checkout: Path) -> list[str]:
    """dynfuzz's runtime dependencies, read from the checkout's pyproject.toml, torch left out (the release's
    own is installed)."""
    data = tomllib.loads((checkout / "pyproject.toml").read_text())
    deps = data.get("project", {}).get("dependencies", [])
    return [d for d in deps if re.split(r"[<>=!~ \[;]", d.strip(), maxsplit=1)[0].lower() != "torch"]


def _last_error(text: str) -> str:
    """The line of pip's output that says why it failed (its last `ERROR:` line, else the last line)."""
    lines = [ln.strip() for ln in text.splitlines() if ln.strip() and not ln.startswith("WARNING: Location")]
    errors = [ln for ln in lines if ln.startswith("ERROR:")]
    line = (errors or lines or ["no output"])[-1]
    return line.removeprefix("ERROR: ")[:300]


def _run(cmd: list[str], what: str, timeout: float = 3600) -> str:
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise InstallError(f"{what} took more than {timeout:.0f} s") from None
    except OSError as e:
        raise InstallError(f"{what}: {e.strerror}") from None
    if done.returncode != 0:
        raise InstallError(f"{what}: {_last_error(done.stderr + done.stdout)}")
    return done.stdout


def query(python: Path) -> dict:
    """What an interpreter holds: its torch build tag, its Python version, its site-packages folders."""
    out = _run([str(python), "-c", _QUERY], f"{python} cannot import torch")
    return json.loads(out.strip().splitlines()[-1])


class PipInstaller:
    """Builds release environments with pip, as configured on this machine."""

    def __init__(self, python: str | None = None) -> None:
        self.python = python or sys.executable

    def available(self) -> list[str] | None:
        """The torch releases the package index lists (`pip index versions torch`), oldest first; local builds
        (`2.13.0+cpu`) count as their release, pre-releases are left out. None when pip cannot tell."""
        try:
            out = _run([self.python, "-m", "pip", "index", "versions", "torch"], "pip index versions", 300)
        except InstallError:
            return None
        for line in out.splitlines():
            if line.strip().startswith("Available versions:"):
                found = {v.strip().split("+", 1)[0] for v in line.split(":", 1)[1].split(",")}
                return sorted((v for v in found if _VERSION.match(v)), key=version_key)
        return None

    def create(self, venv: Path, release: str, checkout: Path) -> str:
        """A fresh environment at `venv` with torch `release`; returns torch's build tag (`2.14.1+cu130`)."""
        _run([self.python, "-m", "venv", str(venv)], "python -m venv")
        python = venv_python(venv)
        _run([str(python), "-m", "pip", "install", "--no-cache-dir", "--disable-pip-version-check",
              f"torch=={release}", *requirements(checkout)], f"pip install torch=={release}")
        self.link_checkout(venv, checkout)
        return query(python)["torch"]

    def adopt(self, venv: Path, release: str, checkout: Path, source: Path) -> str:
        """An environment at `venv` layered over the existing one at `source`, which must hold `release`."""
        source_python = venv_python(source) if source.is_dir() else source
        if not source_python.exists():
            raise InstallError(f"{source}: not a virtual environment (no bin/python)")
        held = query(source_python)
        if held["torch"].split("+", 1)[0] != release:
            raise InstallError(f"{source} holds torch {held['torch']}, not {release}")
        _run([str(source_python), "-m", "venv", str(venv)], "python -m venv")
        site = Path(query_site(venv_python(venv)))
        (site / ADOPTED_PTH).write_text("\n".join(held["site"]) + "\n")
        _run([str(venv_python(venv)), "-m", "pip", "install", "--no-cache-dir", "--disable-pip-version-check",
              *requirements(checkout)], "pip install dynfuzz's dependencies")
        self.link_checkout(venv, checkout)
        return query(venv_python(venv))["torch"]

    def link_checkout(self, venv: Path, checkout: Path) -> None:
        """Install the checkout editable into the environment (no dependencies: they are there already)."""
        _run([str(venv_python(venv)), "-m", "pip", "install", "--no-cache-dir", "--disable-pip-version-check",
              "--no-deps", "-e", str(checkout)], f"pip install -e {checkout}")


def query_site(python: Path) -> str:
    out = _run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"], "python")
    return out.strip().splitlines()[-1]


def version_key(release: str) -> tuple[int, ...]:
    """`2.9.1` -> (2, 9, 1): releases sort by number, not by text (2.10 after 2.9)."""
    return tuple(int(p) for p in release.split("+", 1)[0].split("."))


def is_release(text: str) -> bool:
    """A torch release number as `--torch` takes it: `2.14.1`, `2.5` (no local tag, no pre-release)."""
    return bool(_VERSION.match(text))
