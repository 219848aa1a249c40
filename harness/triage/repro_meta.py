"""Where a repro's metadata lives: beside the script, never in it.

A repro script is plain code a person pastes; what dynfuzz needs to replay it (oracle, kind, signature,
compile settings, bucket, provenance) is a JSON file beside it, `<stem>.json` (`repro.py` -> `repro.json`).
While a repro is still text in memory (rendered, verified, sent between processes) the metadata travels
as its last line, `# dynfuzz-meta: {json}`; `write_repro` splits that line off into the sidecar file.
Older repros and corpus entries kept it in the script as `DYNFUZZ = {...}`; every reader accepts all three
(`meta_of`, `meta_of_text`).
"""
from __future__ import annotations

import ast
import json
from importlib import metadata
from pathlib import Path
from typing import Any

TRAILER = "# dynfuzz-meta: "


def sidecar(path: Path) -> Path:
    """The metadata file of the repro at `path`."""
    return Path(path).with_suffix(".json")


def attach(script: str, meta: dict[str, Any]) -> str:
    """The in-memory form: the script with its metadata as the last line."""
    return script.rstrip("\n") + "\n" + TRAILER + json.dumps(meta, default=str) + "\n"


def split(text: str) -> tuple[str, dict[str, Any] | None]:
    """`(script, metadata)` of an in-memory repro (metadata None when it has no trailer)."""
    body = text.rstrip("\n")
    head, _, last = body.rpartition("\n")
    if last.startswith(TRAILER):
        try:
            meta = json.loads(last[len(TRAILER):])
        except ValueError:
            return text, None
        return head + "\n", meta if isinstance(meta, dict) else None
    return text, None


def script_of(text: str) -> str:
    """What a person sees: the script without the metadata line."""
    return split(text)[0]


def code_lines(text: str) -> int:
    """A repro's size as PyTorch's issue triage counts it: lines of code that are not blank, not comments and
    not imports (the metadata line is not part of the script)."""
    return sum(1 for line in script_of(text).splitlines()
               if line.strip() and not line.strip().startswith(("#", "import ", "from ")))


def legacy_meta(text: str) -> dict[str, Any]:
    """The `DYNFUZZ = {...}` literal of an older repro or corpus entry (empty when absent or unreadable)."""
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "DYNFUZZ" for t in node.targets):
            try:
                value = ast.literal_eval(node.value)
            except ValueError:
                return {}
            return value if isinstance(value, dict) else {}
    return {}


def meta_of_text(text: str) -> dict[str, Any]:
    """Metadata carried in a repro's text: its trailer line, else its `DYNFUZZ` literal, else none."""
    _script, meta = split(text)
    return meta if meta is not None else legacy_meta(text)


def meta_of(path: Path, text: str | None = None) -> dict[str, Any]:
    """A saved repro's metadata: its sidecar file, else what its text carries (empty for a plain script)."""
    side = sidecar(path)
    if Path(path).suffix == ".py" and side.is_file():
        try:
            meta = json.loads(side.read_text())
        except (OSError, ValueError):
            meta = None
        if isinstance(meta, dict):
            return meta
    if text is None:
        try:
            text = Path(path).read_text()
        except (OSError, UnicodeDecodeError):
            return {}
    return meta_of_text(text)


def has_meta(path: Path) -> bool:
    """Whether the file at `path` is a repro with metadata (a sidecar, a trailer or a `DYNFUZZ` block)."""
    return bool(meta_of(path))


def write_repro(path: Path, text: str, meta: dict[str, Any] | None = None) -> Path:
    """Write a repro: the script to `path`, its metadata (the trailer's, or `meta`) to the sidecar file."""
    path = Path(path)
    script, carried = split(text)
    meta = meta if meta is not None else carried
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(script)
    tmp.replace(path)
    if meta is not None:
        sidecar(path).write_text(json.dumps(meta, indent=1, default=str) + "\n")
    return path


def torch_version() -> str:
    """The installed torch's version, as a repro's metadata records it ("unknown" without torch)."""
    try:
        return metadata.version("torch")
    except metadata.PackageNotFoundError:
        return "unknown"
