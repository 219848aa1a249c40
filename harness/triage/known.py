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
_LOCUS = re.compile(r" near [^ ]+(?= @|$)")
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
        for item in self.issues:
            for sig in signatures_of(item):
                self.entries.setdefault(sig, item)

    def __contains__(self, signature: str) -> bool:
        return signature in self.entries

    def match(self, key: str, torch: str | None = None) -> dict | None:
        """The entry whose key, or one of its `aliases` (the keys its variant repros get), is `key` on this torch
        release (`torch` None: any release)."""
        key = _LOCUS.sub("", key)
        if ": tensor ops" in key:  # names no construct: matching it would hide any other such divergence
            return None
        for item in self.issues:
            if not any(key in (known, _without_layer(known, key)) for known in map(_without_locus, keys_of(item))):
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
            if "key" in item and not isinstance(item["key"], str):
                raise UsageError(f"{path}: issue entry {n}: `key` must be a string")
            if "signature" not in item and "key" not in item:
                raise UsageError(f"{path}: every [[issue]] needs a key (run `dynfuzz known --refresh`)")
            for sig in signatures_of(item):
                entries[sig] = item
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


def _without_locus(key: str) -> str:
    """Keys match whatever localization added (` near <file>:<function>`): a known issue is recognised as soon as
    a bucket is explained, before its localization comes back, and a locus may move between releases."""
    return _LOCUS.sub("", key)


def signatures_of(item: dict) -> list[str]:
    """The signatures an entry's repros show (`signature` is one, or a list: one per repro)."""
    sig = item.get("signature") or []
    return [sig] if isinstance(sig, str) else list(sig)


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
@dataclass
class ReproKey:
    """What one corpus repro produces now: its explained bucket key, its cheap key and the chosen signature."""

    key: str
    cheap_key: str
    signature: str


def key_of_repro(path: Path, wanted: dict | None = None) -> ReproKey | None:
    """The key a campaign would file the repro at `path` under (explained by ablation; its cheap key while
    unexplained: see `Explanation.unexplained`), or None if it no longer diverges. Localization is left out:
    known issues match whatever locus a bucket gets (`_without_locus`).

    When the repro shows several findings, the one with one of the entry's signatures is taken, else the most
    severe one."""
    from dynfuzz.oracles.model import SEVERITY
    from dynfuzz.run.compilers import CompileSpec, make_compiler
    from dynfuzz.run.judge import judge
    from dynfuzz.triage.explain import cheap_explanation, explain
    from dynfuzz.triage.repro import read_program

    saved = read_program(path)
    meta = saved.meta
    spec = CompileSpec(meta.get("compiler", "torch"), meta.get("backend", "eager"), meta.get("device", "cpu"),
                       bool(meta.get("fullgraph", False)), meta.get("dynamic"))
    compiler = make_compiler(spec)
    findings = judge(saved.case, compiler, spec).findings
    if not findings:
        return None
    wanted_sigs = set(signatures_of(wanted or {})) | ({meta["signature"]} if meta.get("signature") else set())
    chosen = next((f for f in findings if f.signature in wanted_sigs), None) \
        or max(findings, key=lambda f: SEVERITY.get(f.severity, 0))
    cheap = cheap_explanation(saved.case, chosen)
    explained = explain(saved.case, chosen, spec, compiler)
    key = cheap.key if explained.unexplained else explained.key
    return ReproKey(key, cheap.key, chosen.signature)


def _releases(item: dict) -> list[str]:
    versions = item.get("torch") or []
    return [versions] if isinstance(versions, str) else list(versions)


def refresh(known: KnownIssues, torch_version: str, out=print) -> int:
    """Recompute every entry's key from its repros, record their cheap keys as aliases (so a campaign without
    triage recognises them too) and add this torch release; then merge entries whose keys became one (one
    entry per fault). Returns the entries that failed."""
    failed = 0
    for item in known.issues:
        repros = [r for r in repros_of(item) if known.entry_path(r).exists()]
        if not repros:
            out(f"SKIP  {item.get('title', '?')}: no corpus repro")
            failed += 1
            continue
        keys = [key_of_repro(known.entry_path(r), item) for r in repros]
        if keys[0] is None:
            out(f"FIXED {repros[0]}: no longer diverges on torch {torch_version}; key kept")
            failed += 1
            continue
        found = [k for k in keys if k is not None]
        if found[0].key != item.get("key"):
            out(f"KEY   {repros[0]}: {item.get('key')!r} -> {found[0].key!r}")
        item["key"] = found[0].key
        aliases = {k.key for k in found[1:]} | {k.cheap_key for k in found if "tensor ops" not in k.cheap_key}
        item["aliases"] = sorted(aliases - {item["key"]})
        sigs = list(dict.fromkeys(signatures_of(item) + [k.signature for k in found]))
        item["signature"] = sigs[0] if len(sigs) == 1 else sigs
        versions = _releases(item)
        if release(torch_version) not in {release(v) for v in versions}:
            versions.append(release(torch_version))
        item["torch"] = versions
    merge_same_keys(known)
    return failed


def merge_same_keys(known: KnownIssues) -> int:
    """Entries with one key are one fault: the first keeps its fields and takes the others' repros, aliases,
    signatures, releases, upstream link and notes. Returns how many entries were merged away."""
    by_key: dict[str, dict] = {}
    kept: list[dict] = []
    for item in known.issues:
        first = by_key.get(item.get("key", ""))
        if first is None or not item.get("key"):
            by_key[item.get("key", "")] = item
            kept.append(item)
            continue
        first["corpus"] = list(dict.fromkeys(repros_of(first) + repros_of(item)))
        first["aliases"] = sorted((set(first.get("aliases", [])) | set(keys_of(item))) - {first["key"]})
        sigs = list(dict.fromkeys(signatures_of(first) + signatures_of(item)))
        first["signature"] = sigs[0] if len(sigs) == 1 else sigs
        first["torch"] = sorted(set(_releases(first)) | set(_releases(item)))
        first["upstream"] = first.get("upstream") or item.get("upstream", "")
        notes = [n for n in (first.get("note"), item.get("note")) if n]
        if notes:
            first["note"] = "; ".join(dict.fromkeys(notes))
    merged = len(known.issues) - len(kept)
    known.issues = kept
    known.entries = {sig: item for item in kept for sig in signatures_of(item)}
    return merged


def check(known: KnownIssues, torch_version: str, out=print) -> int:
    """Entries (listing this release) one of whose repros no longer produces one of the entry's keys; 0 means
    no drift."""
    drift = 0
    for item in known.issues:
        versions = _releases(item)
        if versions and release(torch_version) not in {release(v) for v in versions}:
            out(f"skip  {item.get('corpus')}: listed for torch {', '.join(versions)}")
            continue
        allowed = {_without_locus(k) for k in keys_of(item)}
        for corpus in repros_of(item):
            found = key_of_repro(known.entry_path(corpus), item) if known.entry_path(corpus).exists() else None
            if found is None or _without_locus(found.key) not in allowed:
                drift += 1
                out(f"DRIFT {corpus}: expected {item.get('key')!r}, got {found.key if found else None!r}")
            else:
                out(f"ok    {corpus}: {found.key}")
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
    found = key_of_repro(target)
    if found is None:
        target.unlink()
        raise UsageError(f"{repro} does not diverge here; nothing to promote")
    item.update(key=found.key, signature=found.signature, torch=[release(torch_version)])
    if "tensor ops" not in found.cheap_key and found.cheap_key != found.key:
        item["aliases"] = [found.cheap_key]
    known.issues.append(item)
    known.entries[found.signature] = item
    return item


def _title(bucket_dir: Path) -> str:
    report = bucket_dir / "report.md"
    if report.is_file():
        for line in report.read_text().splitlines():
            if line.strip():
                return line.lstrip("# ").strip()
    return bucket_dir.name
