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
from dynfuzz.run.compilers import CompileSpec, make_compiler
from dynfuzz.triage.identity import names_fault

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


# Note [Known issues on an unlisted release]
# An entry lists the releases its key was computed on. On another release (a newer torch) its repro may no
# longer diverge, or diverge under another key, so the entry is not trusted there as it stands: the first time
# a finding's key shares a tier (explained keys) or an oracle and class (cheap keys) with it, the `verifier`
# runs the entry's repros on the running torch (in fresh processes; a campaign verifies every such entry in the
# background from its start, so a match rarely waits: Note [Known issues are verified beside the campaign] in
# releases/known_verifier.py; `verify_seconds` is the time matches waited) and returns the keys they produce
# there, cached per (entry, release) on disk. An entry whose repros still diverge matches through its keys, aliases
# and those keys; one whose repros all agree is FIXED on that release and matches nothing there (`verifications()`
# lists both for summary.json).
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
        for item in self.issues:
            for sig in signatures_of(item):
                self.entries.setdefault(sig, item)

    def __contains__(self, signature: str) -> bool:
        return signature in self.entries

    def match(self, key: str, torch: str | None = None) -> dict | None:
        """The entry whose key, or one of its `aliases` (the keys its variant repros get), is `key` on this torch
        release (`torch` None: any release); on a release the entry does not list, only once verified there."""
        key = _LOCUS.sub("", key)
        if not names_fault(key):  # matching it would hide any other divergence of its kind
            return None
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
            if any(key in (known, _without_layer(known, key)) for known in map(_without_locus, keys)):
                return item
        bare = without_settings(key)  # Note [A setting is how a fault surfaced]
        if not names_fault(bare):
            return None
        for item in self.issues:
            versions = releases_of(item)
            if torch is not None and versions and release(torch) not in versions:
                continue  # an unlisted release matches only on a verified exact key, above
            if any(bare in (b, _without_layer(b, bare)) for b in
                   (without_settings(_without_locus(k)) for k in keys_of(item))):
                return item
        return None

    def _verify(self, key: str, rel: str) -> None:
        """Verify, once per release, the unlisted entries that share `key`'s tier or oracle and class."""
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


def releases_of(item: dict) -> set[str]:
    """The releases an entry lists in `torch` (one string or a list), local build tags dropped."""
    return {release(str(v)) for v in _releases(item)}


def _oracle_class(key: str | None) -> str:
    """`effects/lost-effect: ...` -> `effects/lost-effect`; `miscompile: set-subclass` -> `miscompile`."""
    return (key or "").split(":", 1)[0].strip()


# Note [A setting is how a fault surfaced]
# An explained key keeps the settings ablation found the divergence needs (`under fullgraph=True`, `under
# dynamic=True`, `under config.use_graph_deduplication=True`): they tell apart buckets of one campaign, and a repro
# needs them. For a known issue they are how the fault surfaced, not which fault it is: a 2.13 run filed the known
# bounded-deque, OrderedDict and set-subclass replay faults and the known graph-deduplication crash as four new
# buckets, each only because the drawn program needed fullgraph, dynamic shapes or a config to show it. So a key
# that matches no entry exactly matches one whose key or alias is the same with the settings taken off both, when
# what is left still names a fault (`names_fault`: never a bare exception type or a generic mechanism).
_SETTINGS = re.compile(r" under [^@]+?(?= @[\w.-]+$|$)")


def without_settings(key: str) -> str:
    """The key with its `under <settings>` part taken off."""
    return _SETTINGS.sub("", key)


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
    from dynfuzz.run.judge import judge
    from dynfuzz.triage.repro import read_program

    saved = read_program(path)
    meta = saved.meta
    spec = CompileSpec(meta.get("compiler", "torch"), meta.get("backend", "eager"), meta.get("device", "cpu"),
                       bool(meta.get("fullgraph", False)), meta.get("dynamic"))
    compiler = make_compiler(spec)
    findings = judge(saved.case, compiler, spec).findings
    if not findings:
        return None
    wanted = dict(wanted or {})
    if meta.get("signature") and not wanted.get("signature"):
        wanted["signature"] = meta["signature"]
    chosen = choose_finding(findings, wanted)
    return key_for(saved.case, chosen, spec, compiler)


def key_for(case: Any, finding: Any, spec: Any, compiler: Any) -> ReproKey:
    """The key a campaign files `finding` of `case` under once triaged: explained, else its cheap key."""
    from dynfuzz.triage.explain import cheap_explanation, explain

    cheap = cheap_explanation(case, finding)
    explained = explain(case, finding, spec, compiler)
    return ReproKey(cheap.key if explained.unexplained else explained.key, cheap.key, finding.signature)


def choose_finding(findings: list, wanted: dict):
    """Of a repro's findings, the one an entry (`wanted`: its `signature`, one or a list, and `key`) is about:
    one with its signature, else one of its cheap key's oracle, else the most severe."""
    from dynfuzz.oracles.model import SEVERITY

    sigs = set(signatures_of(wanted))
    prefix = (wanted.get("key") or "").split(":", 1)[0]
    return next((f for f in findings if f.signature in sigs), None) \
        or next((f for f in findings if prefix and prefix.startswith(f.oracle + "/")), None) \
        or max(findings, key=lambda f: SEVERITY.get(f.severity, 0))


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
        before = keys_of(item)  # a key the entry had stays an alias: `match` still refuses the surface and generic ones
        item["key"] = found[0].key
        aliases = {k.key for k in found[1:]} | {k.cheap_key for k in found if "tensor ops" not in k.cheap_key}
        item["aliases"] = sorted((aliases | set(before)) - {item["key"]})
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
        if first is None or not item.get("key") or not names_fault(item["key"]):  # a generic key is no fault's
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
    if repro.with_suffix(".json").is_file():  # the repro's metadata, beside it (triage/repro_meta.py)
        shutil.copyfile(repro.with_suffix(".json"), target.with_suffix(".json"))
    try:
        relative = str(target.relative_to(known.path.parent)) if known.path is not None else str(target)
    except ValueError:
        relative = str(target)
    item: dict[str, Any] = {"title": _title(bucket_dir), "upstream": upstream, "corpus": relative}
    found = key_of_repro(target)
    if found is None:
        target.unlink()
        target.with_suffix(".json").unlink(missing_ok=True)
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
