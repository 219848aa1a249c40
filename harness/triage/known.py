"""`corpus/known_issues.toml`: torch bugs already known, matched by bucket key, and `dynfuzz known`.

Each `[[issue]]` names its corpus repro; its `key` is computed by dynfuzz from that repro (judge,
explain), never typed by hand: `dynfuzz known --refresh` recomputes every key and adds the running
torch release to the entry's `torch` list; `dynfuzz known --check` fails when an entry's repro no longer
produces its key (CI catches drift); `dynfuzz known add OUT/findings/<bucket>` promotes a campaign's
bucket, its repro copied into `corpus/`. An entry matches a bucket by key on the torch releases it
lists, because a key that holds a torch frame may change between releases. On a release it does not list,
an entry matches only once a `verifier` (campaigns and the gate set one: `dynfuzz.releases.known_verifier`)
has run its repros there and they still diverge: Note [Known issues on an unlisted release]. The older
`signature` field stays for `dynfuzz replay`, which still compares signatures.
"""
from __future__ import annotations

import json
import re
import shutil
import sys
import time
import tomllib
from collections.abc import Callable
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


# Note [Known issues on an unlisted release]
# An entry lists the releases its key was computed on. On another release (a newer torch) its repro may no
# longer diverge, or diverge under another key, so the entry is not trusted there as it stands: the first time
# a finding's key shares an oracle and class with it, the `verifier` runs the entry's repros on the running
# torch (in fresh processes, outside the campaign's budget: `verify_seconds` is added to it) and returns the
# keys they produce there, cached per (entry, release) on disk. An entry whose repros still diverge matches
# through its keys, aliases and those keys; one whose repros all agree is FIXED on that release and matches
# nothing there (`verifications()` lists both for summary.json).
Verifier = Callable[[list[tuple[dict, list[Path]]], str], list[list[str] | None]]


@dataclass
class KnownIssues:
    """Known issues by signature (`entries`, as replay reads them) and by bucket key (`match`)."""

    entries: dict[str, dict] = field(default_factory=dict)
    issues: list[dict] = field(default_factory=list)
    path: Path | None = None
    verifier: Verifier | None = None  # Note [Known issues on an unlisted release]
    verified: dict[tuple[int, str], list[str] | None] = field(default_factory=dict)  # (entry, release) -> keys
    verify_seconds: float = 0.0

    def __post_init__(self) -> None:
        if not self.issues:
            self.issues = list(self.entries.values())

    def __contains__(self, signature: str) -> bool:
        return signature in self.entries

    def match(self, key: str, torch: str | None = None) -> dict | None:
        """The entry whose key, or one of its `aliases` (the keys its variant repros get), is `key` on this torch
        release (`torch` None: any release); on a release the entry does not list, only once verified there."""
        if torch is not None and self.verifier is not None:
            self._verify(key, release(torch))
        for n, item in enumerate(self.issues):
            keys = keys_of(item)
            versions = releases_of(item)
            if not (torch is None or not versions or release(torch) in versions):
                observed = self.verified.get((n, release(torch)))
                if not observed:  # not verified here, or FIXED here
                    continue
                keys = keys + observed
            if any(key in (known, _without_layer(known, key)) for known in keys):
                return item
        return None

    def _verify(self, key: str, rel: str) -> None:
        """Verify, once per release, the unlisted entries that share `key`'s oracle and class."""
        wanted = []
        for n, item in enumerate(self.issues):
            versions = releases_of(item)
            if not versions or rel in versions or (n, rel) in self.verified:
                continue
            if _oracle_class(key) in {_oracle_class(k) for k in keys_of(item)}:
                wanted.append(n)
        if not wanted:
            return
        start = time.monotonic()
        results = self.verifier([(self.issues[n], [self.entry_path(c) for c in repros_of(self.issues[n])])
                                 for n in wanted], rel)
        self.verify_seconds += time.monotonic() - start
        for n, keys in zip(wanted, results):
            self.verified[(n, rel)] = None if keys is None else list(keys)

    def verifications(self) -> list[dict]:
        """The entries verified on a release they do not list: `reproduces` true (with the keys seen there),
        false (FIXED there) or null (could not be judged there)."""
        return [{"key": self.issues[n].get("key"), "corpus": next(iter(repros_of(self.issues[n])), None),
                 "torch": rel, "reproduces": None if keys is None else bool(keys), "keys": keys or []}
                for (n, rel), keys in self.verified.items()]

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


def releases_of(item: dict) -> set[str]:
    """The releases an entry lists in `torch` (one string or a list), local build tags dropped."""
    versions = item.get("torch") or []
    return {release(str(v)) for v in ([versions] if isinstance(versions, str) else versions)}


def _oracle_class(key: str | None) -> str:
    """`effects/lost-effect: ...` -> `effects/lost-effect`."""
    return (key or "").split(":", 1)[0].strip()


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
    chosen = choose_finding(findings, wanted or {})
    return explain(saved.case, chosen, spec, compiler).key, chosen.signature


def choose_finding(findings: list, wanted: dict):
    """Of a repro's findings, the one an entry (`wanted`: its `signature`, `key`) is about: the one with its
    signature, else its key's oracle, else the most severe."""
    from dynfuzz.oracles.model import SEVERITY

    prefix = (wanted.get("key") or "").split(":", 1)[0]
    return next((f for f in findings if f.signature == wanted.get("signature")), None) \
        or next((f for f in findings if prefix and prefix.startswith(f.oracle + "/")), None) \
        or max(findings, key=lambda f: SEVERITY.get(f.severity, 0))


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
