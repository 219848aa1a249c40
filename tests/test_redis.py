"""The shared example database on a real redis-server (started on loopback by a fixture): a failure found by
shard 1/2 is replayed first by shard 2/2, entries expire when told, and an outage loses no finding."""
from __future__ import annotations

import shutil
import socket
import subprocess
import time
from pathlib import Path

import pytest
from dynfuzz.campaign.campaign import Campaign, CampaignConfig
from dynfuzz.campaign.exampledb import FindingsDB
from dynfuzz.cli import main
from dynfuzz.run.compilers import CompileSpec

pytestmark = pytest.mark.redis


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class RedisServer:
    """A throwaway redis-server on loopback: no persistence, stoppable and restartable on the same port."""

    def __init__(self, workdir: Path) -> None:
        self.port, self.workdir, self.process = _free_port(), workdir, None
        self.url = f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        self.process = subprocess.Popen(
            ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
             "--dir", str(self.workdir)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.2).close()
                return
            except OSError:
                time.sleep(0.05)
        raise RuntimeError("redis-server did not start")

    def stop(self) -> None:
        if self.process is not None:
            self.process.terminate()
            self.process.wait(10)
            self.process = None


@pytest.fixture
def redis_server(tmp_path):
    if shutil.which("redis-server") is None:
        pytest.skip("redis-server is not installed (Debian package redis-server; .ci/run installs it)")
    pytest.importorskip("redis", reason="the redis extra is not installed (pip install 'dynfuzz[redis]')")
    server = RedisServer(tmp_path)
    server.start()
    yield server
    server.stop()


def run(out: Path, url: str, cases: int, shard: tuple[int, int], **kw) -> dict:
    config = CampaignConfig(budget=120, out=out, spec=CompileSpec(compiler="perturb-output"), families=("basic",),
                            max_cases=cases, progress=False, workers=0, database=url, shard=shard, **kw)
    return Campaign(config).run()


def test_a_failure_found_by_shard_1_is_replayed_first_by_shard_2(redis_server, tmp_path):
    first = run(tmp_path / "s1", redis_server.url, 4, (1, 2))
    assert first["unique"] >= 1 and first["replayed_from_database"] == 0
    failing = {u["seed"] for u in first["unique_findings"]}
    config = CampaignConfig(budget=120, out=tmp_path / "s2", spec=CompileSpec(compiler="perturb-output"),
                            families=("basic",), max_cases=len(failing), progress=False, workers=0,
                            database=redis_server.url, shard=(2, 2))
    first_case = Campaign(config)._next_case()
    assert first_case.seed is None and first_case.choices  # re-drawn from the shared database, not from a seed
    summary = Campaign(config).run()
    assert summary["replayed_from_database"] == len(failing)
    assert {u["signature"] for u in summary["unique_findings"]} == {u["signature"] for u in first["unique_findings"]}


def test_entries_expire_after_the_given_days(redis_server, tmp_path):
    import redis

    run(tmp_path / "a", redis_server.url, 2, (1, 1), db_expire_days=2)
    client = redis.Redis.from_url(redis_server.url)
    ttls = [client.ttl(key) for key in client.keys(b"hypothesis-example:dynfuzz:findings:*")]
    assert ttls and all(2 * 86400 - 60 < t <= 2 * 86400 for t in ttls)


def test_a_redis_outage_during_a_campaign_loses_no_finding(redis_server, tmp_path):
    config = CampaignConfig(budget=120, out=tmp_path / "out", spec=CompileSpec(compiler="perturb-output"),
                            families=("basic",), max_cases=3, progress=False, workers=0,
                            database=redis_server.url)
    campaign = Campaign(config)  # connected, nothing to replay
    redis_server.stop()
    summary = campaign.run()
    assert summary["cases"] == 3 and summary["unique"] >= 1
    assert list((tmp_path / "out" / "findings").rglob("*.py"))
    db = campaign.findings_db
    assert db.failures >= 1 and db.unsaved  # kept back, to be written when the server answers again
    redis_server.start()
    assert db.flush(force=True) and not db.unsaved
    again = FindingsDB.at(redis_server.url, ("basic",))
    assert len(again.replay_cases()) >= 1


def test_an_unreachable_redis_url_is_a_one_line_usage_error(tmp_path, capsys):
    pytest.importorskip("redis")
    port = _free_port()
    assert main(["fuzz", "--db", f"redis://127.0.0.1:{port}", "--cases", "1", "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "cannot reach the Redis example database" in err
