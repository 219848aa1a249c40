"""`corpus/known_issues.toml`: torch bugs already known, matched by bucket key, and `dynfuzz known`.

Each `[[issue]]` names its corpus repro; its `key` is computed by dynfuzz from that repro (judge,
explain), never typed by hand: `dynfuzz known --refresh` recomputes every key and adds the running
torch release to the entry's `torch` list; `dynfuzz known --check` fails when an entry's repro no longer
produces its key (CI catches drift); `dynfuzz known add OUT/findings/<bucket>` promotes a campaign's
bucket, its repro copied into `corpus/`. An entry matches a bucket by key on the torch releases it
lists, because a key that holds a torch frame may change between releases. The older `signature`
field stays for `dynfuzz replay`, which still compares signatures.
"""
from __future__ import annotations

import json
import re
import shutil
import sys
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dynfuzz.errors import UsageError
from dynfuzz.paths import known_issues_file

_WARNED: list[Path] = []
_LAYER = re.compile(r" @[\w.-]+$")
FIELDS = ("key", "aliases", "signature", "title", "upstream", "note", "corpus", "torch", "fixed_in")
HEADER = """\
# Torch bugs already known (see docs/findings.md, "Known issues"). Campaigns count these but do not re-report
# them; the gate treats them as expected; `dynfuzz replay` says loudly (FIXED) when one stops diverging.
# `key` is the bucket key, computed by `dynfuzz known --refresh` from the entry's corpus repro, never
# typed by hand; `torch` lists the releases it was seen on (a key matches only on those releases);
# `dynfuzz known --check` fails when a repro no longer produces its key. `signature` is kept for replay.
"""


def release(version: str) -> str:
    """`2.13.0+cpu` -> `2.13.0`: local build tags do not change Dynamo."""
    return version.split("+", 1)[0]


@dataclass
class KnownIssues:
    """Known issues by signature (`entries`, as replay reads them) and by bucket key (`match`)."""

    entries: dict[str, dict] = field(default_factory=dict)
    issues: list[dict] = field(default_factory=list)
    path: Path | None = None

    def __post_init__(self) -> None:
        if not self.issues:
            self.issues = list(self.entries.values())

    def __contains__(self, signature: str) -> bool:
        return signature in self.entries

    def match(self, key: str, torch: str | None = None) -> dict | None:
        """The entry whose key, or one of its `aliases` (the keys its variant repros get), is `key` on this torch
        release (`torch` None: any release)."""
        for item in self.issues:
            if not any(key in (known, _without_layer(known, key)) for known in keys_of(item)):
                continue
            versions = item.get("torch") or []
            versions = [versions] if isinstance(versions, str) else versions
            if torch is None or not versions or release(torch) in {release(v) for v in versions}:
                return item
        return None

    def entry_path(self, relative: str) -> Path:
        """A repro an entry names (`corpus = "x.py"`): relative to the known-issues file's folder."""
        path = Path(relative)
        if path.is_absolute() or self.path is None:
            return path
        return self.path.parent / path

    @classmethod
    def load(cls, path: Path | None = None) -> KnownIssues:
        default, path = path is None, known_issues_file() if path is None else Path(path)
        if path is None:
            return cls()
        if not path.exists():
            if default and not _WARNED:  # a non-editable install leaves corpus/ behind: say so, once
                _WARNED.append(path)
                print(f"dynfuzz: no known-issues file at {path} (install with `pip install -e`, or pass --known); "
                      "every bug counts as new", file=sys.stderr)
            return cls(path=path)
        try:
            data = tomllib.loads(path.read_text())
        except tomllib.TOMLDecodeError as e:
            raise UsageError(f"{path}: not valid TOML: {e}") from None
        issues = data.get("issue", [])
        if not isinstance(issues, list):
            raise UsageError(f"{path}: `issue` must be an array of tables ([[issue]]), not {type(issues).__name__}")
        entries = {}
        for n, item in enumerate(issues, 1):
            if not isinstance(item, dict):
                raise UsageError(f"{path}: issue entry {n} must be a table ([[issue]]), not {type(item).__name__}")
            bad = next((k for k in ("key", "signature") if k in item and not isinstance(item[k], str)), None)
            if bad:
                raise UsageError(f"{path}: issue entry {n}: `{bad}` must be a string")
            if "signature" not in item and "key" not in item:
                raise UsageError(f"{path}: every [[issue]] needs a key (run `dynfuzz known --refresh`)")
            if item.get("signature"):
                entries[item["signature"]] = item
        return cls(entries, list(issues), path)

    def save(self, path: Path | None = None) -> None:
        """Rewrite the file: the header, then one `[[issue]]` table per entry, fields in a fixed order."""
        path = path or self.path or known_issues_file()
        if path is None:
            raise UsageError("no corpus folder to write known_issues.toml into: pass --corpus DIR or --known FILE")
        parts = [HEADER]
        for item in self.issues:
            lines = ["[[issue]]"]
            for name in list(FIELDS) + sorted(set(item) - set(FIELDS)):
                if name in item:
                    lines.append(f"{name} = {_toml_value(item[name])}")
            parts.append("\n".join(lines) + "\n")
        path.write_text("\n".join(parts))


def keys_of(item: dict) -> list[str]:
    """An entry's key and its aliases: one fault, reached through several repros, keyed several ways."""
    aliases = item.get("aliases") or []
    return [k for k in [item.get("key"), *([aliases] if isinstance(aliases, str) else aliases)] if k]


def repros_of(item: dict) -> list[str]:
    """The entry's corpus repros (`corpus` is one path or a list: the first is the entry's own, the rest are
    variants of the same fault, replayed too)."""
    corpus = item.get("corpus") or []
    return [corpus] if isinstance(corpus, str) else list(corpus)


def _without_layer(known: str | None, key: str) -> str | None:
    """A key that names no layer (layer triangulation did not run) matches an entry whatever its layer."""
    if known is None or _LAYER.search(key):
        return None
    return _LAYER.sub("", known)


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    return json.dumps(value, ensure_ascii=False) if isinstance(value, str) else str(value)


# ---- computing keys from corpus repros ----
def key_of_repro(path: Path, wanted: dict | None = None) -> tuple[str | None, str | None]:
    """(bucket key, signature) the repro at `path` produces now, or (None, None) if it no longer diverges.

    When the repro shows several findings, the one with the entry's old signature (else key prefix)
    is taken, else the most severe one."""
    from dynfuzz.oracles.model import SEVERITY
    from dynfuzz.run.compilers import CompileSpec, make_compiler
    from dynfuzz.run.judge import judge
    from dynfuzz.triage.explain import explain
    from dynfuzz.triage.repro import read_program

    saved = read_program(path)
    meta = saved.meta
    spec = CompileSpec(meta.get("compiler", "torch"), meta.get("backend", "eager"), meta.get("device", "cpu"),
                       bool(meta.get("fullgraph", False)), meta.get("dynamic"))
    compiler = make_compiler(spec)
    findings = judge(saved.case, compiler, spec).findings
    if not findings:
        return None, None
    wanted = wanted or {}
    prefix = (wanted.get("key") or "").split(":", 1)[0]
    chosen = next((f for f in findings if f.signature == wanted.get("signature")), None) \
        or next((f for f in findings if prefix and prefix.startswith(f.oracle + "/")), None) \
        or max(findings, key=lambda f: SEVERITY.get(f.severity, 0))
    return explain(saved.case, chosen, spec, compiler).key, chosen.signature


def refresh(known: KnownIssues, torch_version: str, out=print) -> int:
    """Recompute every entry's key from its repro; add this torch release. Returns entries that failed."""
    failed = 0
    for item in known.issues:
        corpus = next(iter(repros_of(item)), None)
        if not corpus or not known.entry_path(corpus).exists():
            out(f"SKIP  {item.get('title', '?')}: no corpus repro")
            failed += 1
            continue
        key, signature = key_of_repro(known.entry_path(corpus), item)
        if key is None:
            out(f"FIXED {corpus}: no longer diverges on torch {torch_version}; key kept")
            failed += 1
            continue
        if key != item.get("key"):
            out(f"KEY   {corpus}: {item.get('key')!r} -> {key!r}")
        item["key"] = key
        item.setdefault("signature", signature)
        versions = item.get("torch") or []
        versions = [versions] if isinstance(versions, str) else list(versions)
        if release(torch_version) not in {release(v) for v in versions}:
            versions.append(release(torch_version))
        item["torch"] = versions
    return failed


def check(known: KnownIssues, torch_version: str, out=print) -> int:
    """Entries (listing this release) whose repro no longer produces their key; 0 means no drift."""
    drift = 0
    for item in known.issues:
        versions = item.get("torch") or []
        versions = [versions] if isinstance(versions, str) else versions
        if versions and release(torch_version) not in {release(v) for v in versions}:
            out(f"skip  {item.get('corpus')}: listed for torch {', '.join(versions)}")
            continue
        corpus = next(iter(repros_of(item)), None)
        key = key_of_repro(known.entry_path(corpus), item)[0] if corpus and known.entry_path(corpus).exists() \
            else None
        if key is None or key != item.get("key"):
            drift += 1
            out(f"DRIFT {corpus}: expected {item.get('key')!r}, got {key!r}")
        else:
            out(f"ok    {corpus}: {key}")
    return drift


def add(known: KnownIssues, bucket_dir: Path, torch_version: str, upstream: str = "",
        corpus_dir: Path | None = None) -> dict:
    """Promote a campaign bucket (`OUT/findings/<slug>-<id>`): copy its repro into the corpus, add an entry."""
    bucket_dir = Path(bucket_dir)
    repro = bucket_dir / "repro.py"
    if not repro.is_file():
        raise UsageError(f"{bucket_dir}: not a bucket folder (no repro.py)")
    corpus_dir = corpus_dir or (known.path.parent if known.path is not None else None)
    if corpus_dir is None:
        raise UsageError("no corpus folder to add the repro to: pass --corpus DIR or --known FILE")
    name = re.sub(r"-[0-9a-f]{12}$", "", bucket_dir.name).replace("-", "_") + ".py"
    target = corpus_dir / name
    if target.exists():
        raise UsageError(f"{target} already exists; rename the bucket's repro by hand")
    shutil.copyfile(repro, target)
    try:
        relative = str(target.relative_to(known.path.parent)) if known.path is not None else str(target)
    except ValueError:
        relative = str(target)
    item: dict[str, Any] = {"title": _title(bucket_dir), "upstream": upstream, "corpus": relative}
    key, signature = key_of_repro(target)
    if key is None:
        target.unlink()
        raise UsageError(f"{repro} does not diverge here; nothing to promote")
    item.update(key=key, signature=signature, torch=[release(torch_version)])
    known.issues.append(item)
    known.entries[signature] = item
    return item


def _title(bucket_dir: Path) -> str:
    report = bucket_dir / "report.md"
    if report.is_file():
        for line in report.read_text().splitlines():
            if line.strip():
                return line.lstrip("# ").strip()
    return bucket_dir.name
