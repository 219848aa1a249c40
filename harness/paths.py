"""Where dynfuzz's data lives: the corpus of saved programs and its `known_issues.toml`, and its cache.

The corpus is a folder of the checkout, not package data: it grows with every bug found and is edited beside
the code. It is found, first match wins, from
1. `--corpus DIR` on the commands that read it (`fuzz`, `gate`, `replay`, `known`), passed here as `explicit`;
2. the `DYNFUZZ_CORPUS` environment variable;
3. the checkout an editable install (`pip install -e .`, README's set-up) was made from, as pip records it in
   the distribution's `direct_url.json` (PEP 610).
A wheel installed from an index has no checkout: commands that need the corpus then say so in one line.
"""
from __future__ import annotations

import json
import os
from functools import cache
from pathlib import Path

from dynfuzz.errors import UsageError

CORPUS_ENV = "DYNFUZZ_CORPUS"
CACHE_ENV = "DYNFUZZ_CACHE_DIR"
KNOWN_ISSUES = "known_issues.toml"


@cache
def checkout() -> Path | None:
    """The source tree of an editable install of dynfuzz, or None (a regular install, or not installed).

    Every `dynfuzz` distribution on the path is asked: run from the checkout itself, the build's own
    `dynfuzz.egg-info` comes first and records no install."""
    from importlib.metadata import distributions
    from urllib.parse import unquote, urlparse

    for dist in distributions(name="dynfuzz"):
        text = dist.read_text("direct_url.json")
        if not text:
            continue
        info = json.loads(text)
        url = urlparse(info.get("url", ""))
        if url.scheme == "file" and info.get("dir_info", {}).get("editable"):
            return Path(unquote(url.path))
    return None


def corpus_dir(explicit: str | Path | None = None, required: bool = True) -> Path | None:
    """The corpus folder (see the module docstring for the order). `required`: a one-line `UsageError` when
    there is none, else None."""
    if explicit:
        path = Path(explicit)
        if not path.is_dir():
            raise UsageError(f"--corpus {explicit}: not a folder")
        return path
    if os.environ.get(CORPUS_ENV):
        path = Path(os.environ[CORPUS_ENV])
        if not path.is_dir():
            raise UsageError(f"{CORPUS_ENV}={path}: not a folder")
        return path
    root = checkout()
    if root is not None and (root / "corpus").is_dir():
        return root / "corpus"
    if required:
        raise UsageError("no corpus folder: pass --corpus DIR or set DYNFUZZ_CORPUS (a regular install of dynfuzz "
                         "has no checkout to find it in; `pip install -e .` from a clone has)")
    return None


def known_issues_file(corpus: str | Path | None = None) -> Path | None:
    """`<corpus>/known_issues.toml`, or None when no corpus folder is found."""
    folder = corpus_dir(corpus, required=False)
    return folder / KNOWN_ISSUES if folder is not None else None


def cache_dir() -> Path:
    """dynfuzz's cache folder: `$DYNFUZZ_CACHE_DIR`, else `~/.cache/dynfuzz` (coverage's static data, release
    environments, known issues verified per release). A path that exists and is not a folder is a usage error."""
    path = Path(os.environ.get(CACHE_ENV) or Path.home() / ".cache" / "dynfuzz")
    if path.exists() and not path.is_dir():
        source = f"{CACHE_ENV}={path}" if os.environ.get(CACHE_ENV) else str(path)
        raise UsageError(f"{source}: the cache folder is not a folder")
    return path
