"""`dynfuzz check FILE.py`: run every oracle on one saved or hand-written program."""
from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from .compilers import CompileSpec, make_compiler
from .judge import judge
from .repro import read_program


def check(path: Path, spec_for: Callable[[dict], CompileSpec]) -> int:
    """Print the findings for one program; exit code 1 if there are any, 0 if none.

    `spec_for(meta)` turns the file's saved metadata into the compile spec (flags given win)."""
    saved = read_program(path)
    spec = spec_for(saved.meta)
    result = judge(saved.case, make_compiler(spec), spec)
    print(f"{path}: {spec.describe()}")
    if not result.findings:
        print("no divergence")
        return 0
    for f in result.findings:
        print(f"{f.signature}  {f.title}")
        for line in f.details[:8]:
            print(f"    {line}")
    return 1
