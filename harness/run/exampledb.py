"""Findings' Hypothesis choice sequences in Hypothesis's example database, replayed first next time.

A campaign saves the choices of every unique finding under a key per family
mix; the next campaign with the same database re-draws and re-runs those
cases before drawing new ones, so a nightly run starts by checking whether
yesterday's bugs are still there. Any Hypothesis database works: a directory
(carried between CI runs as an artifact), or a shared Redis database for
sharded runs (`hypothesis[redis]`'s `RedisExampleDatabase`).
"""
from __future__ import annotations

from pathlib import Path

from dynfuzz.generators.case import Case, redraw
from hypothesis.database import DirectoryBasedExampleDatabase, ExampleDatabase, choices_from_bytes, choices_to_bytes
from hypothesis.errors import StopTest


def _key(families: tuple[str, ...]) -> bytes:
    return b"dynfuzz:findings:" + ",".join(sorted(families)).encode()


class FindingsDB:
    """Save and fetch finding choice sequences for one family mix."""

    def __init__(self, db: ExampleDatabase, families: tuple[str, ...]) -> None:
        self.db, self.families, self.key = db, families, _key(families)

    @classmethod
    def at(cls, path: Path, families: tuple[str, ...]) -> FindingsDB:
        return cls(DirectoryBasedExampleDatabase(str(path)), families)

    def save(self, case: Case) -> None:
        if case.choices:
            self.db.save(self.key, choices_to_bytes(case.choices))

    def replay_cases(self) -> list[Case]:
        """Cases re-drawn from saved choices; entries the current generators can no longer draw are dropped."""
        cases = []
        for blob in sorted(self.db.fetch(self.key)):
            choices = choices_from_bytes(blob)
            try:
                cases.append(redraw(tuple(choices), self.families) if choices is not None else None)
            except (Exception, StopTest):  # generators changed since it was saved: it no longer draws (StopTest:
                # the saved choices ran out mid-draw; a BaseException, so `except Exception` alone misses it)
                self.db.delete(self.key, blob)
                continue
        return [c for c in cases if c is not None]
