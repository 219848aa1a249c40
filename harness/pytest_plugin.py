"""pytest plugin (entry point `dynfuzz`): corpus entries become test items.

`pytest corpus/ -n 2` replays the corpus under pytest-xdist. An entry whose
status is `known` or `open` is marked xfail(strict=True): while its signature
still appears it is reported as xfail; once it passes, XPASS(strict) fails the
run so the status gets updated. A diverging `passing` entry is a failure.

Note [The corpus on another torch release]
An entry's status records the behaviour of the torch release it was saved on (its `DYNFUZZ['torch']`). Run on
another release (`tox -e torch251`), an entry that behaves otherwise (a seed scenario that diverges: a bug that
release has; a known bug that is absent or shows differently) is skipped, naming both releases and what was
observed: it is a fact about that release, which `dynfuzz releases` records, not a regression of dynfuzz. A
harness error is a failure on every release. On a release at or after the `fixed_in` its known-issues entry
records (`dynfuzz releases check --record`), the entry must agree: a divergence there is a failure.
"""
from __future__ import annotations

from pathlib import Path

import pytest
from dynfuzz.triage.corpus_replay import expected_status, is_corpus_file, recorded_elsewhere, run_entry_isolated


class KnownDivergence(Exception):
    """A known or open entry still shows its recorded signature (reported as xfail)."""


class CorpusDivergence(Exception):
    """A corpus entry behaved differently from what its metadata records."""


def pytest_addoption(parser) -> None:
    group = parser.getgroup("dynfuzz")
    group.addoption("--dynfuzz-known", default=None, help="known-issues TOML (default corpus/known_issues.toml)")


def pytest_collect_file(parent, file_path: Path):
    """Collect `.py` files under a folder named `corpus` that have repro metadata (`<stem>.json` or `DYNFUZZ`)."""
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
        if expected in ("known", "open") and on_this_release(
                meta, self.path, KnownIssues.load(Path(known_path) if known_path else None)) == "fixed":
            item.fixed_here = True  # fixed on this release (its entry's `fixed_in`): it must agree
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
    fixed_here = False

    def runtest(self) -> None:
        from dynfuzz.triage.repro import read_program, torch_version

        known_path = self.config.getoption("--dynfuzz-known", default=None)
        outcome = run_entry_isolated(str(self.path), known_path)
        if self.fixed_here:
            if outcome.verdict != "FIXED":
                raise CorpusDivergence(f"recorded fixed on torch {torch_version()} (its entry's fixed_in), but "
                                       f"{outcome.verdict}: observed {outcome.observed}: {outcome.detail}")
            return
        if outcome.verdict in ("NEW", "CHANGED", "FIXED"):
            recorded = recorded_elsewhere(read_program(self.path).meta)
            if recorded is not None:  # Note [The corpus on another torch release]
                pytest.skip(f"recorded on torch {recorded}; torch {torch_version()} behaves otherwise here "
                            f"({outcome.verdict}: expected {outcome.expected}, observed {outcome.observed}"
                            f"{': ' + outcome.detail[:200] if outcome.detail else ''})")
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
