"""The documentation points at things that exist: every repository path README.md and docs/ name, every
Markdown link, and every Note the code or the docs refer to (defined once, where the invariant lives)."""
from __future__ import annotations

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
TOP = ("generators/", "harness/", "oracles/", "reference_impl/", "corpus/", "docs/", "bench/", "tests/", ".ci/",
       ".github/")
PATH = re.compile(r"`((?:%s)[\w./*<>-]*)`" % "|".join(re.escape(t) for t in TOP))
LINK = re.compile(r"\]\(([^)#\s]+)(?:#[^)]*)?\)")
NOTE = re.compile(r"Note \[([^\]]+)\]")
DEFINITION = re.compile(r"^\s*(?:#\s*|-\s+)?(?=Note \[)")  # a line that opens with the Note defines it
PY_PATH = re.compile(r"`([\w./-]+/[\w.-]+\.py)\b")  # `triage/explain.py`: from the top or under harness/


def _tracked() -> list[Path]:
    out = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard"], cwd=ROOT,
                         capture_output=True, text=True, check=True).stdout.split()
    return [ROOT / p for p in dict.fromkeys(out)
            if p.endswith((".py", ".md", ".toml", ".ini", ".yml")) and (ROOT / p).exists()]


def _exists(text: str, base: Path) -> bool:
    """A path as the docs write it: plain, with a glob (`classes_*.py`) or a placeholder (`<slug>-<id>`)."""
    if "<" in text:  # a placeholder names an output file, not a repository one: its folder must exist
        text = text.split("<", 1)[0].rsplit("/", 1)[0] or "."
    if "*" in text:
        return any(base.glob(text))
    return (base / text).exists()


def test_every_repository_path_the_docs_name_exists():
    missing = []
    for doc in DOCS:
        for n, line in enumerate(doc.read_text().splitlines(), 1):
            for m in PATH.finditer(line):
                if not _exists(m.group(1).rstrip("."), ROOT):
                    missing.append(f"{doc.relative_to(ROOT)}:{n}: {m.group(1)}")
            for m in PY_PATH.finditer(line):
                if not any(_exists(m.group(1), base) for base in (ROOT, ROOT / "harness")):
                    missing.append(f"{doc.relative_to(ROOT)}:{n}: {m.group(1)}")
    assert missing == []


def test_every_markdown_link_resolves():
    broken = []
    for doc in DOCS:
        for n, line in enumerate(doc.read_text().splitlines(), 1):
            for m in LINK.finditer(line):
                target = m.group(1)
                if target.startswith(("http://", "https://", "mailto:")):
                    continue
                if not (doc.parent / target).exists():
                    broken.append(f"{doc.relative_to(ROOT)}:{n}: {target}")
    assert broken == []


def test_every_note_referred_to_is_defined_once():
    """A Note is defined by a line holding only `Note [X]` (in a comment or docstring); every other mention
    refers to it, and must name a Note that is defined."""
    defined: dict[str, list[str]] = {}
    referred: dict[str, str] = {}
    for path in _tracked():
        if path.name == "test_docs.py":
            continue
        for n, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
            for m in NOTE.finditer(line):
                where = f"{path.relative_to(ROOT)}:{n}"
                if DEFINITION.match(line) and line.index(m.group(0)) == DEFINITION.match(line).end():
                    defined.setdefault(m.group(1), []).append(where)
                else:
                    referred.setdefault(m.group(1), where)
    assert {name: where for name, where in referred.items() if name not in defined} == {}
    assert {name: places for name, places in defined.items() if len(places) > 1} == {}
