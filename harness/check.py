"""`dynfuzz check FILE.py`: run every oracle on one saved or hand-written program."""
from __future__ import annotations

from pathlib import Path

from .compilers import make_compiler
from .judge import judge
from .repro import read_program


def check(path: Path, args, make_spec) -> int:
    """Print the findings for one program; exit code 1 if there are any, 0 if none."""
    from .cli import COMPILE_DEFAULTS

    saved = read_program(path)
    for flag, default in COMPILE_DEFAULTS.items():
        if getattr(args, flag) is None:
            setattr(args, flag, saved.meta.get(flag, default))
    spec = make_spec(args)
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
