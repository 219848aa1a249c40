"""`dynfuzz replay`: re-run corpus entries and compare what happens with their recorded status.

An entry's metadata says `status`: `passing` (a seed scenario that must keep
agreeing), `known` (reported upstream; listed in known_issues.toml) or `open`
(a saved divergence not yet reported). Verdicts: `ok` (passing and agrees),
`still failing` (known/open and its signature still appears), `FIXED`
(known/open and now agrees: update its status), `NEW` (a passing entry
diverges), `CHANGED` (a known/open entry diverges differently), `ERROR`.
"""
from __future__ import annotations

import json
import sys
import time
import warnings
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from multiprocessing import get_context
from pathlib import Path

from dynfuzz.errors import UsageError
from dynfuzz.run.compilers import CompileSpec, make_compiler, quiet_torch_logs
from dynfuzz.run.torch_logs import capture
from dynfuzz.triage.known import KnownIssues

BAD_VERDICTS = ("NEW", "CHANGED", "ERROR")
SELF_KINDS = ("reference-bug",)  # a bug in dynfuzz's reference tracer, not in torch: noted, not a verdict


@dataclass
class Outcome:
    """One replayed entry: what its metadata expected, what was observed, and the verdict."""

    path: str
    expected: str
    observed: str
    verdict: str
    signature: str | None = None
    found: list[str] = field(default_factory=list)
    detail: str = ""
    seconds: float = 0.0
    torch_log: str = ""  # torch's own log lines while the entry ran (run/torch_logs.py), never printed

    @property
    def name(self) -> str:
        return Path(self.path).stem

    @property
    def bad(self) -> bool:
        return self.verdict in BAD_VERDICTS


def is_corpus_file(path: Path) -> bool:
    """A corpus entry: a `.py` file (not a test or conftest) with repro metadata (a `<stem>.json` beside it, its
    last line, or an older entry's `DYNFUZZ` block: `repro_meta`)."""
    from dynfuzz.triage.repro_meta import has_meta

    if path.suffix != ".py" or path.name == "conftest.py" or path.name.startswith(("test_", "_")):
        return False
    return has_meta(path)


def discover(paths: list[str] | None) -> list[Path]:
    """Corpus files under the given files or folders (default: the corpus folder, `dynfuzz.paths`)."""
    from dynfuzz.paths import corpus_dir

    found: list[Path] = []
    for raw in paths or [str(corpus_dir())]:
        p = Path(raw)
        if not p.exists():
            raise UsageError(f"no such corpus file or folder: {raw}")
        if p.is_dir():
            found.extend(q for q in sorted(p.rglob("*.py")) if is_corpus_file(q))
        elif p.suffix != ".py":
            raise UsageError(f"{raw}: a corpus entry is a .py file")
        else:
            found.append(p)
    return found


def expected_status(meta: dict, known: KnownIssues) -> str:
    if meta.get("signature") and meta["signature"] in known:
        return "known"
    return str(meta.get("status", "open"))


def recorded_elsewhere(meta: dict) -> str | None:
    """The torch release a corpus entry's status was recorded on, when the running torch is another release (None
    when they are the same, or the entry records none). An entry records one release's behaviour: on another, a
    different verdict is that release's behaviour (a bug it has or lacks), not a regression of dynfuzz; the
    suite then skips the entry naming both (Note [The corpus on another torch release] in pytest_plugin.py)."""
    from dynfuzz.triage.known import release
    from dynfuzz.triage.repro import torch_version

    recorded = release(str(meta.get("torch") or ""))
    return recorded if recorded and recorded != release(torch_version()) else None


def verdict_for(expected: str, signature: str | list[str] | None, found: list[str]) -> str:
    """The replay verdict for an entry expected to be `expected`, given the signatures observed; `signature`
    may list several (a known entry's `signature` list: a fault whose symptom depends on the process, such as
    a recursion crash whose exception depends on the stack depth left)."""
    if expected == "passing":
        return "ok" if not found else "NEW"
    if not found:
        return "FIXED"
    wanted = {signature} if isinstance(signature, str) or signature is None else set(signature)
    return "still failing" if wanted & set(found) else "CHANGED"


def restore_dynamo_config(before: dict) -> None:
    """Put back every torch._dynamo.config value that differs from `before` (a get_config_copy())."""
    import torch._dynamo.config as config

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for key, value in before.items():
            if getattr(config, key) != value:
                setattr(config, key, value)


def run_entry(path: str, known_path: str | None = None) -> Outcome:
    """Judge one corpus entry with the compile settings in its metadata (in this process)."""
    import torch._dynamo.config as config
    from dynfuzz.run.judge import judge
    from dynfuzz.triage.repro import read_program

    quiet_torch_logs()
    start = time.perf_counter()
    try:
        known = KnownIssues.load(Path(known_path) if known_path else None)
        saved = read_program(Path(path))
    except UsageError as e:
        return Outcome(path, "?", "unreadable", "ERROR", detail=str(e))
    meta = saved.meta
    expected = expected_status(meta, known)
    spec = CompileSpec(meta.get("compiler", "torch"), meta.get("backend", "eager"), meta.get("device", "cpu"),
                       bool(meta.get("fullgraph", False)), meta.get("dynamic"))
    if spec.device == "cuda":
        import torch

        if not torch.cuda.is_available():
            return Outcome(path, expected, "skipped (no CUDA)", "ok", meta.get("signature"))
    before = config.get_config_copy()
    try:
        with capture() as log:  # torch's own log lines belong to the entry, never between the table's rows
            result = judge(saved.case, make_compiler(spec), spec)
    except Exception as e:  # a harness failure on this entry, reported rather than raised
        return Outcome(path, expected, "harness error", "ERROR", detail=f"{type(e).__name__}: {e}")
    finally:
        restore_dynamo_config(before)
    torch_findings = [f for f in result.findings if f.kind not in SELF_KINDS]
    found = [f.signature for f in torch_findings]
    observed = "diverges" if found else "agrees"
    from dynfuzz.triage.known import signatures_of

    entry = known.entries.get(meta.get("signature") or "")
    verdict = verdict_for(expected, [meta.get("signature"), *signatures_of(entry or {})], found)
    detail = "; ".join(f"{f.signature} {f.title}" for f in torch_findings[:3])
    notes = [f"{f.signature} {f.title}" for f in result.findings if f.kind in SELF_KINDS]
    if notes:
        detail = (detail + "; " if detail else "") + "dynfuzz's own reference disagreed: " + "; ".join(notes[:2])
    return Outcome(path, expected, observed, verdict, meta.get("signature"), found, detail,
                   time.perf_counter() - start, log.text)


PRELOAD = ["torch", "torch._dynamo", "dynfuzz.triage.corpus_replay"]


def _isolated_child(path: str, known_path: str | None, log: str, conn) -> None:
    import dataclasses
    import os

    fd = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
    os.dup2(fd, 1)
    os.dup2(fd, 2)
    conn.send(json.dumps(dataclasses.asdict(run_entry(path, known_path))))


def run_entry_isolated(path: str, known_path: str | None = None, timeout: float = 600) -> Outcome:
    """`run_entry` in a fresh process, as a user runs a repro: what an entry shows must not depend on what ran
    before it in the process (in a test session, earlier tests left state through which a stale-guard entry
    passed, and a closed log stream that failed every later entry). The process is forked from a forkserver that
    imported torch and Dynamo once (`PRELOAD`) and nothing else, so each entry starts from a clean interpreter
    without paying torch's import again (about 4 of its 5 seconds)."""
    import tempfile

    ctx = get_context("forkserver")
    ctx.set_forkserver_preload(PRELOAD)
    receive, send = ctx.Pipe(duplex=False)
    with tempfile.NamedTemporaryFile(prefix="dynfuzz-entry-", suffix=".log") as log:
        child = ctx.Process(target=_isolated_child, args=(path, known_path, log.name, send), daemon=True)
        child.start()
        send.close()
        payload = None
        try:
            if receive.poll(timeout):
                payload = receive.recv()
        except EOFError:  # the child died without an answer
            pass
        child.join(5 if payload is not None else 1)
        timed_out = payload is None and child.is_alive()
        if child.is_alive():
            child.kill()
            child.join()
        if payload is None:
            detail = f"ran past {timeout:.0f} s" if timed_out else \
                f"exit {child.exitcode}: {Path(log.name).read_text(errors='replace')[-1500:]}"
            return Outcome(path, "?", "harness error", "ERROR", detail=detail)
    return Outcome(**json.loads(payload))


def replay(paths: list[Path], workers: int = 2, known_path: str | None = None) -> list[Outcome]:
    """Run every entry, in `workers` spawned processes (0: in this process); results in input order."""
    if workers <= 0 or len(paths) <= 1:
        return [run_entry(str(p), known_path) for p in paths]
    with ProcessPoolExecutor(min(workers, len(paths)), mp_context=get_context("spawn")) as pool:
        return list(pool.map(run_entry, [str(p) for p in paths], [known_path] * len(paths)))


def format_table(outcomes: list[Outcome]) -> str:
    """Plain-text table: entry, expected status, observed, verdict."""
    rows = [("entry", "expected", "observed", "verdict")]
    rows += [(o.name, o.expected, o.observed, o.verdict) for o in outcomes]
    widths = [max(len(r[i]) for r in rows) for i in range(4)]
    lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    for o in outcomes:
        if o.verdict == "FIXED":
            lines.append(f"FIXED: {o.name} ({o.signature}) no longer diverges: set its status to passing "
                         f"and close the upstream issue")
        elif o.bad:
            lines.append(f"{o.verdict}: {o.name}: {o.detail}")
    return "\n".join(lines)


def replay_command(paths: list[str], workers: int, known_path: str | None) -> int:
    """`dynfuzz replay`: exit 1 when an entry is NEW, CHANGED or ERROR; 0 otherwise (FIXED is flagged)."""
    if workers < 0:
        raise UsageError("--workers must be 0 or more")
    if known_path:
        KnownIssues.load(Path(known_path))
    files = discover(paths)
    if not files:
        raise UsageError("no corpus entries found")
    outcomes = replay(files, workers, known_path)
    print(format_table(outcomes))
    return 1 if any(o.bad for o in outcomes) else 0
