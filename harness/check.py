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
    """Judge one program text (the program convention, docs/programs.md) and return the oracles' findings.

    >>> check_source("import torch\\ndef f(x): return x + 1\\ndef inputs(device, call=0): return (torch.ones(2),)")
    []
    """
    spec = spec or CompileSpec()
    return list(judge(Case(source=source, entry=entry), make_compiler(spec), spec).findings)


def check(path: Path | None, spec_for: Callable[[dict], CompileSpec], case: Case | None = None) -> int:
    """Print the findings for one program (a file, or a redrawn `case`); exit code 1 if torch diverges, 0 if
    not (or the case is skipped), 2 if the program is unusable (its inputs() raised).

    `spec_for(meta)` turns the file's saved metadata into the compile spec (flags given win)."""
    from dynfuzz.errors import InvalidCase, UsageError

    saved = read_program(path) if case is None else None
    spec = spec_for(saved.meta if saved else {})
    case = saved.case if saved else case
    try:
        result = judge(case, make_compiler(spec), spec)
    except InvalidCase as e:
        raise UsageError(f"{path or f'case seed {case.seed}'}: {e}") from None
    print(f"{path or f'case seed {case.seed}'}: {spec.describe()}")
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
