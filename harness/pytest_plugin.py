"""pytest plugin (entry point `dynfuzz`): corpus entries become test items.

`pytest corpus/ -n 2` replays the corpus under pytest-xdist. An entry whose
status is `known` or `open` is marked xfail(strict=True): while its signature
still appears it is reported as xfail; once it passes, XPASS(strict) fails the
run so the status gets updated. A diverging `passing` entry is a failure.

Across torch releases (docs/releases.md) the known-issues entry of a corpus file decides: on a release at or
after its `fixed_in` the entry must agree (it is expected to pass); on a release its `torch` list does not
name, what it does is not recorded, so it is xfail without strictness (it may pass, or fail differently).
"""
from __future__ import annotations

from pathlib import Path

import pytest
from dynfuzz.triage.corpus_replay import expected_status, is_corpus_file, run_entry


class KnownDivergence(Exception):
    """A known or open entry still shows its recorded signature (reported as xfail)."""


class CorpusDivergence(Exception):
    """A corpus entry behaved differently from what its metadata records."""


def pytest_addoption(parser) -> None:
    group = parser.getgroup("dynfuzz")
    group.addoption("--dynfuzz-known", default=None, help="known-issues TOML (default corpus/known_issues.toml)")


def pytest_collect_file(parent, file_path: Path):
    """Collect `.py` files under a folder named `corpus` that define `DYNFUZZ` metadata."""
    if "corpus" in file_path.parts and is_corpus_file(file_path):
        return CorpusFile.from_parent(parent, path=file_path)
    return None


class CorpusFile(pytest.File):
    def collect(self):
        from dynfuzz.triage.known import KnownIssues
        from dynfuzz.triage.repro import read_program

        item = CorpusItem.from_parent(self, name=self.path.stem)
        known_path = self.config.getoption("--dynfuzz-known", default=None)
        try:
            meta = read_program(self.path).meta
            expected = expected_status(meta, KnownIssues.load(Path(known_path) if known_path else None))
        except Exception:  # an unreadable entry is collected and fails with the reason when run
            expected = "?"
        here = on_this_release(meta, self.path, KnownIssues.load(Path(known_path) if known_path else None)) \
            if expected in ("known", "open") else None
        if here == "fixed":
            pass  # fixed on this release (its `fixed_in`): it must agree
        elif here == "unlisted":
            import torch

            item.add_marker(pytest.mark.xfail(strict=False, reason=f"{expected} issue {meta.get('signature')}: "
                                              f"not recorded on torch {torch.__version__}"))
        elif expected in ("known", "open"):
            item.add_marker(pytest.mark.xfail(strict=True, raises=KnownDivergence,
                                              reason=f"{expected} issue {meta.get('signature')}"
                                                     f" {meta.get('upstream') or ''}".rstrip()))
        yield item


def on_this_release(meta: dict, path: Path, known) -> str | None:
    """What a known or open corpus entry is recorded to do on the running torch: `fixed` (at or after its
    known-issues entry's `fixed_in`), `unlisted` (a release its entry's `torch` list, or for an entry with no
    known-issues entry the release its metadata was written on, does not name), or None (it reproduces here)."""
    import torch
    from dynfuzz.releases.installer import version_key
    from dynfuzz.triage.known import release, releases_of, repros_of

    here = release(torch.__version__)
    item = known.entries.get(meta.get("signature")) or next(
        (i for i in known.issues if any(known.entry_path(c).resolve() == path.resolve() for c in repros_of(i))), None)
    if item is None:
        return "unlisted" if meta.get("torch") and release(str(meta["torch"])) != here else None
    if item.get("fixed_in") and version_key(here) >= version_key(release(str(item["fixed_in"]))):
        return "fixed"
    versions = releases_of(item)
    return "unlisted" if versions and here not in versions else None


class CorpusItem(pytest.Item):
    def runtest(self) -> None:
        known_path = self.config.getoption("--dynfuzz-known", default=None)
        outcome = run_entry(str(self.path), known_path)
        if outcome.verdict == "still failing":
            raise KnownDivergence(f"{outcome.signature} still diverges")
        if outcome.bad:
            raise CorpusDivergence(f"{outcome.verdict}: expected {outcome.expected}, observed {outcome.observed}: "
                                   f"{outcome.detail}")

    def repr_failure(self, excinfo, style=None):
        if isinstance(excinfo.value, (CorpusDivergence, KnownDivergence)):
            return str(excinfo.value)
        return super().repr_failure(excinfo, style)

    def reportinfo(self):
        return self.path, 0, f"corpus: {self.name}"
