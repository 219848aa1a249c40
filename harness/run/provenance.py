"""What a result was produced with, beyond the torch release: the Hypothesis release (a case seed redraws its
program only under the same one), dynfuzz's own commit, and what dynfuzz changed in the torch under test.

`provenance()` is recorded in `summary.json` and in every repro's `DYNFUZZ` block, so that a finding, a
campaign or a seed can be traced to exactly the code that produced it.
"""
from __future__ import annotations

import subprocess
from functools import cache
from importlib import metadata
from pathlib import Path
from typing import Any


def hypothesis_version() -> str:
    try:
        return metadata.version("hypothesis")
    except metadata.PackageNotFoundError:
        return "unknown"


@cache
def dynfuzz_commit() -> str | None:
    """The git commit of the checkout dynfuzz runs from (`-dirty` appended when tracked files differ from it),
    or None when it is not run from a git checkout (a wheel) or git cannot say."""
    root = Path(__file__).resolve().parents[2]
    if not (root / ".git").exists() or not (root / "harness" / "__init__.py").exists():
        return None
    try:
        head = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True,
                              timeout=10)
        if head.returncode != 0:
            return None
        dirty = subprocess.run(["git", "-C", str(root), "diff", "--quiet", "HEAD", "--"], capture_output=True,
                               timeout=10).returncode == 1
    except (OSError, subprocess.SubprocessError):
        return None
    return head.stdout.strip() + ("-dirty" if dirty else "")


def provenance() -> dict[str, Any]:
    """`hypothesis`, `dynfuzz_commit` and `torch_patches` (see `torch_compat.torch_patches`)."""
    from dynfuzz.run.torch_compat import torch_patches

    return {"hypothesis": hypothesis_version(), "dynfuzz_commit": dynfuzz_commit(), "torch_patches": torch_patches()}
