"""What runs inside a release's environment: `python -m dynfuzz.releases.probe REPRO.py`, in a fresh process.

A repro with metadata (a corpus entry, a bucket's `repro.py` and its `repro.json`) or any program of the
convention is judged the way `dynfuzz replay` judges it (its program, its compile settings, every oracle), so
a release's outcome is decided by signature exactly as replay decides still failing / FIXED / CHANGED; the
finding the entry is about is then explained into its bucket key on this release. Before that the program
runs once eagerly: an error saying that torch lacks a module, attribute or name the program uses means the
repro needs an API this release does not have (`n/a`), never a pass. The result is one line on stdout,
`DYNFUZZ-PROBE {json}`, whatever torch prints.
"""
from __future__ import annotations

import json
import re
import sys
import time
from pathlib import Path
from typing import Any

MARK = "DYNFUZZ-PROBE "
MISSING_API = re.compile(r"module '(torch[\w.]*)' has no attribute '(\w+)'"
                         r"|No module named '(torch[\w.]*)'"
                         r"|cannot import name '(\w+)' from '(torch[\w.]*)'")


def missing_api(text: str) -> str | None:
    """The torch API an error message says is missing (`torch.compiler.nested_compile_region`), or None."""
    m = MISSING_API.search(text)
    if m is None:
        return None
    if m.group(1):
        return f"{m.group(1)}.{m.group(2)}"
    return m.group(3) or f"{m.group(5)}.{m.group(4)}"


def _eager_lacks(case: Any, device: str) -> str | None:
    """Run the program eagerly once: the missing torch API its errors name, if any."""
    from dynfuzz.run.execute import observe

    obs = observe(case.eager_source or case.source, case.entry, device, None, "eager")
    errors = [obs.setup_error] + [c.error for c in obs.calls] + [c.between_error for c in obs.calls]
    for e in errors:
        if e is not None:
            found = missing_api(f"{e.message}\n{e.detail}")
            if found:
                return found
    return None


def probe(path: Path) -> dict[str, Any]:
    """Judge one repro on the torch of this process; see the module docstring."""
    import torch
    from dynfuzz.errors import UsageError
    from dynfuzz.run.compilers import CompileSpec, make_compiler, quiet_torch_logs
    from dynfuzz.run.judge import judge
    from dynfuzz.run.torch_compat import Unavailable
    from dynfuzz.triage.corpus_replay import SELF_KINDS
    from dynfuzz.triage.known import choose_finding, key_for
    from dynfuzz.triage.repro import read_program

    quiet_torch_logs()
    start = time.perf_counter()
    out: dict[str, Any] = {"torch": torch.__version__, "result": "error", "signatures": [], "key": None,
                           "detail": ""}
    try:
        saved = read_program(path)
    except UsageError as e:
        out["detail"] = str(e)
        return out
    meta = saved.meta
    spec = CompileSpec(meta.get("compiler", "torch"), meta.get("backend", "eager"), meta.get("device", "cpu"),
                       bool(meta.get("fullgraph", False)), meta.get("dynamic"))
    if spec.device == "cuda" and not torch.cuda.is_available():
        out.update(result="n/a", detail="needs CUDA, absent here")
        return out
    try:
        lacking = _eager_lacks(saved.case, spec.device)
        if lacking:
            out.update(result="n/a", detail=f"torch {torch.__version__} has no {lacking}")
            return out
        compiler = make_compiler(spec)
        result = judge(saved.case, compiler, spec)
        if result.skipped:
            out.update(result="n/a", detail=result.skipped)
            return out
        findings = [f for f in result.findings if f.kind not in SELF_KINDS]
        out["signatures"] = [f.signature for f in findings]
        if not findings:
            out["result"] = "agrees"
        else:
            chosen = choose_finding(findings, {"signature": meta.get("signature"), "key": meta.get("bucket")})
            out.update(result="diverges", key=key_for(saved.case, chosen, spec, compiler).key,
                       detail="; ".join(f"{f.signature} {f.title}" for f in findings[:3]))
    except Unavailable as e:
        out.update(result="n/a", detail=str(e))
    except Exception as e:  # dynfuzz could not judge the repro on this release: an error, never a pass
        out.update(result="error", detail=f"{type(e).__name__}: {str(e)[:300]}")
    out["seconds"] = round(time.perf_counter() - start, 3)
    return out


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        print("usage: python -m dynfuzz.releases.probe REPRO.py", file=sys.stderr)
        return 2
    result = probe(Path(args[0]))
    sys.stdout.flush()
    print(MARK + json.dumps(result), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
