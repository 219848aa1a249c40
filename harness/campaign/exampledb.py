"""Findings' Hypothesis choice sequences in Hypothesis's example database, replayed first next time.

A campaign saves the choices of every unique finding under a key per family
mix; the next campaign with the same database re-draws and re-runs those
cases before drawing new ones, so a nightly run starts by checking whether
yesterday's bugs are still there. Two kinds of database:

- a directory (the default; carried between CI runs as an artifact);
- Redis, `--db redis://HOST:PORT[/N]`: Hypothesis's `RedisExampleDatabase`, shared by every shard of a
  CI matrix and every night, so each one replays everyone's failures first. Entries expire after
  `--db-expire` days (Hypothesis's own default is 8 days, too short for weekly jobs), and the client has
  socket and connect timeouts, so an outage cannot hang a campaign.

Note [The database is a cache]
Findings on disk (`OUT/findings/`) are the source of truth. The database is written when it can be: a
failed write is kept and retried later (after a back-off), and a database that cannot be read at the
start of a campaign means nothing is replayed, never a failed campaign.
"""
from __future__ import annotations

import sys
import time
from datetime import timedelta
from pathlib import Path

from dynfuzz.errors import UsageError
from dynfuzz.generators.case import Case, redraw
from hypothesis.database import DirectoryBasedExampleDatabase, ExampleDatabase, choices_from_bytes, choices_to_bytes
from hypothesis.errors import StopTest

CONNECT_TIMEOUT = 4.0  # per connection attempt; a check makes at most two, inside the 10 s promised to users
SOCKET_TIMEOUT = 5.0
RETRY_AFTER = 60.0  # seconds before writing again to a database that failed
DEFAULT_EXPIRE_DAYS = 30.0


def _key(families: tuple[str, ...]) -> bytes:
    return b"dynfuzz:findings:" + ",".join(sorted(families)).encode()


def is_redis_url(where: str | Path) -> bool:
    return str(where).startswith(("redis://", "rediss://", "unix://"))


def redis_client(url: str):
    """A `redis.Redis` for `url` with connect and socket timeouts and a single retry; UsageError if unusable."""
    try:
        import redis
        from redis.backoff import NoBackoff
        from redis.retry import Retry
    except ImportError:
        raise UsageError("--db redis://... needs the redis client; install the extra: "
                         "pip install 'dynfuzz[redis]'") from None
    try:
        return redis.Redis.from_url(url, socket_connect_timeout=CONNECT_TIMEOUT, socket_timeout=SOCKET_TIMEOUT,
                                    retry=Retry(NoBackoff(), 1))
    except ValueError as e:
        raise UsageError(f"--db {url}: {e}") from None


def open_database(where: str | Path, expire_days: float = DEFAULT_EXPIRE_DAYS) -> ExampleDatabase:
    """The example database at a directory or a Redis URL; a Redis server must answer a ping now."""
    if not is_redis_url(where):
        return DirectoryBasedExampleDatabase(str(where))
    if expire_days <= 0:
        raise UsageError("--db-expire must be positive")
    from hypothesis.extra.redis import RedisExampleDatabase

    client = redis_client(str(where))
    try:
        client.ping()
    except Exception as e:  # redis.ConnectionError, TimeoutError, AuthenticationError...
        raise UsageError(f"cannot reach the Redis example database at {where}: {e}") from None
    return RedisExampleDatabase(client, expire_after=timedelta(days=expire_days))


def _db_errors() -> tuple[type[BaseException], ...]:
    """What a database outage raises: OSError for a directory, RedisError (only if loaded) for Redis."""
    errors: tuple[type[BaseException], ...] = (OSError,)
    if "redis" in sys.modules:
        errors += (sys.modules["redis"].RedisError,)
    return errors


MAX_ENTRIES = 500  # finding choice sequences kept per family mix (disk, and replay time at start)


class FindingsDB:
    """Save and fetch finding choice sequences for one family mix (Note [The database is a cache])."""

    def __init__(self, db: ExampleDatabase, families: tuple[str, ...]) -> None:
        self.db, self.families, self.key = db, families, _key(families)
        self.unsaved: list[bytes] = []
        self.stored: int | None = None  # entries under this key (counted on the first save)
        self.dropped = 0  # saves refused at MAX_ENTRIES
        self.failures = 0
        self.down_until = 0.0

    @classmethod
    def at(cls, where: str | Path, families: tuple[str, ...],
           expire_days: float = DEFAULT_EXPIRE_DAYS) -> FindingsDB:
        return cls(open_database(where, expire_days), families)

    def save(self, case: Case) -> None:
        """Queue the case's choices and write what is queued, unless the database failed recently.

        At most MAX_ENTRIES per family mix: the database is replayed at every start, and a nightly that
        finds the same few bugs for months must not grow it without bound (further entries are dropped)."""
        if self.stored is None:
            try:
                self.stored = sum(1 for _ in self.db.fetch(self.key))
            except _db_errors():
                self.stored = 0
        if case.choices and self.stored + len(self.unsaved) < MAX_ENTRIES:
            self.unsaved.append(choices_to_bytes(case.choices))
        elif case.choices:
            self.dropped += 1
        self.flush()

    def flush(self, force: bool = False) -> bool:
        """Write queued entries; False (entries kept for later) when the database does not answer."""
        if not self.unsaved or (not force and time.monotonic() < self.down_until):
            return not self.unsaved
        try:
            while self.unsaved:
                self.db.save(self.key, self.unsaved[0])
                self.unsaved.pop(0)
                self.stored = (self.stored or 0) + 1
        except _db_errors():
            self.failures += 1
            self.down_until = time.monotonic() + RETRY_AFTER
            return False
        return True

    def replay_cases(self) -> list[Case]:
        """Cases re-drawn from saved choices; entries the current generators can no longer draw are dropped.

        A database that cannot be read gives nothing to replay (the campaign still runs)."""
        try:
            blobs = sorted(self.db.fetch(self.key))
        except _db_errors():
            self.failures += 1
            return []
        cases = []
        for blob in blobs:
            choices = choices_from_bytes(blob)
            if choices is None:
                continue
            try:
                cases.append(redraw(tuple(choices), self.families))
            except (Exception, StopTest):  # generators changed since it was saved: it no longer draws (StopTest,
                # a BaseException, when the saved choices run out mid-draw)
                try:
                    self.db.delete(self.key, blob)
                except _db_errors():
                    pass
        return cases
