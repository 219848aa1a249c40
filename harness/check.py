"""`dynfuzz check FILE.py`: run every oracle on one saved or hand-written program."""
from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from dynfuzz.generators.case import Case
from dynfuzz.oracles import Finding
from dynfuzz.run.compilers import CompileSpec, make_compiler
from dynfuzz.run.judge import judge
from dynfuzz.triage.repro import read_program


def check_source(source: str, spec: CompileSpec | None = None, entry: str = "f") -> list[Finding]:
    """Judge one program text (the program convention of README.md) and return the oracles' findings.

    >>> check_source("import torch\\ndef f(x): return x + 1\\ndef inputs(device, call=0): return (torch.ones(2),)")
    []
    """
    spec = spec or CompileSpec()
    return list(judge(Case(source=source, entry=entry), make_compiler(spec), spec).findings)


def check(path: Path, spec_for: Callable[[dict], CompileSpec]) -> int:
    """Print the findings for one program; exit code 1 if torch diverges, 0 if not (or the case is skipped).

    `spec_for(meta)` turns the file's saved metadata into the compile spec (flags given win)."""
    saved = read_program(path)
    spec = spec_for(saved.meta)
    result = judge(saved.case, make_compiler(spec), spec)
    print(f"{path}: {spec.describe()}")
    if result.skipped:
        print(f"skipped: {result.skipped} (a deliberate refusal, correct behaviour)")
    for f in result.findings:
        print(f"{f.signature}  {f.title}")
        for line in f.details[:8]:
            print(f"    {line}")
    if not result.findings:
        print("no divergence")
    own = ("reference-bug", "oracle-error")  # dynfuzz's own errors, never a torch divergence
    return 1 if any(f.kind not in own for f in result.findings) else 0
