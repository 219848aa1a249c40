"""Campaigns on a real local Ray cluster (2 CPUs on loopback): same findings as a local run over the same
seeds, a killed actor's case becomes a crash finding, a hang is timed out, and nothing of Ray is imported
unless --ray is given."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from dynfuzz.campaign.campaign import Campaign, CampaignConfig
from dynfuzz.cli import main
from dynfuzz.run.compilers import CompileSpec
from dynfuzz.triage.repro import read_program

from tests.conftest import judged

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def ray_cluster():
    ray = pytest.importorskip("ray", reason="the ray extra is not installed (pip install 'dynfuzz[ray]')")
    started = not ray.is_initialized()
    if started:
        # one declared GPU (no real one is needed to schedule by it; see the --device cuda test)
        ray.init(num_cpus=2, num_gpus=1, include_dashboard=False, log_to_driver=False, _node_ip_address="127.0.0.1")
    yield ray
    if started:
        ray.shutdown()


def campaign(tmp_path: Path, compiler: str, cases: int, ray: str | None = "local", budget: float = 240, **kw) -> dict:
    """A `--cases` campaign; its budget bounds the triage drain that follows the cases too."""
    config = CampaignConfig(budget=budget, out=tmp_path, spec=CompileSpec(compiler=compiler), families=("basic",),
                            max_cases=cases, progress=False, workers=0, ray=ray, **kw)
    return Campaign(config).run()


def _signatures(summary: dict) -> set[str]:
    return {u["signature"] for u in summary["unique_findings"]}


@pytest.mark.ray
def test_a_ray_campaign_finds_what_a_local_campaign_finds_over_the_same_seeds(ray_cluster, tmp_path):
    local = campaign(tmp_path / "local", "perturb-output", 12, ray=None)
    remote = campaign(tmp_path / "ray", "perturb-output", 12)
    assert remote["cases"] == local["cases"] == 12 and remote["workers"] == 2
    assert _signatures(remote) == _signatures(local) and local["unique"] >= 1
    assert remote["findings"] == local["findings"]
    assert sum(remote["nodes"].values()) == 12
    assert not list((tmp_path / "ray" / "inflight").glob("*.py"))


def _kill_running_actors(pool, stop: threading.Event, killed: list[int]) -> None:
    """SIGKILL every actor seen running a case (the probe answers beside the block), until `stop`."""
    while not stop.is_set():
        for actor in pool.actors:
            try:
                running = pool.ray.get(actor.handle.probe.options(concurrency_group="probe").remote(), timeout=2)
                if running is None:
                    continue
                _, pid = pool.ray.get(actor.handle.ready.options(concurrency_group="probe").remote(), timeout=2)
            except pool.ray.exceptions.RayError:  # dead or restarting
                continue
            os.kill(pid, signal.SIGKILL)
            killed.append(pid)
        time.sleep(0.2)


@pytest.mark.ray
def test_an_actor_killed_while_running_a_case_files_that_case_as_a_crash(ray_cluster, tmp_path, monkeypatch):
    from dynfuzz.campaign import cluster

    stop, killed, pools = threading.Event(), [], []
    original = cluster.RayPool.__init__

    def start_killer(self, *args, **kwargs):
        original(self, *args, **kwargs)
        pools.append(self)
        threading.Thread(target=_kill_running_actors, args=(self, stop, killed), daemon=True).start()

    monkeypatch.setattr(cluster.RayPool, "__init__", start_killer)
    try:
        summary = campaign(tmp_path, "hang", 2, budget=60, case_timeout=600)  # each case runs until it is killed
    finally:
        stop.set()
    assert summary["cases"] == 2 and summary["crashes"] == judged(summary) and summary["hangs"] == 0
    assert len(killed) >= 2 and pools[0].restarts >= 2
    saved = [read_program(p) for p in (tmp_path / "findings").rglob("*.py") if p.name != "repro.py"]
    assert any("def f(" in s.case.source for s in saved)


def _kill_an_actor_midway(monkeypatch, lose_node: bool) -> dict:
    """SIGKILL the actor that was just sent a block, once some results came in (so the block dies with it);
    with `lose_node`, also drop its node-local record, as when Ray restarts it on another node."""
    from dynfuzz.campaign import cluster

    collect, send, post_mortem = cluster.RayPool.collect, cluster.RayPool._send, cluster.RayPool._post_mortem
    state = {"killed": False, "results": 0}

    def counting_collect(self, max_wait):
        out = collect(self, max_wait)
        state["results"] += len(out)
        state["pool"] = self
        return out

    def send_then_kill(self):
        before = {id(actor): len(actor.calls) for actor in self.actors}
        send(self)
        fed = [actor for actor in self.actors if len(actor.calls) > before[id(actor)]]
        if fed and state["results"] and not state["killed"]:
            state["killed"] = True
            _, pid = self.ray.get(fed[0].handle.ready.options(concurrency_group="probe").remote())
            os.kill(pid, signal.SIGKILL)

    def elsewhere(self, actor):
        for record in cluster._record_dir().glob("*.json"):
            record.unlink(missing_ok=True)
        return post_mortem(self, actor)

    monkeypatch.setattr(cluster.RayPool, "collect", counting_collect)
    monkeypatch.setattr(cluster.RayPool, "_send", send_then_kill)
    if lose_node:
        monkeypatch.setattr(cluster.RayPool, "_post_mortem", elsewhere)
    return state


@pytest.mark.ray
def test_a_campaign_survives_an_actor_killed_midway_and_counts_every_case_once(ray_cluster, tmp_path, monkeypatch):
    state = _kill_an_actor_midway(monkeypatch, lose_node=False)
    summary = campaign(tmp_path, "identity", 24)
    assert state["killed"] and state["pool"].restarts == 1
    assert summary["cases"] == 24 and sum(summary["nodes"].values()) == 24
    # a case the actor was running when killed ran again on the restarted actor and did not crash it: a
    # worker-lost harness error at most, never a crash; the identity compiler gives no finding at all
    assert summary["crashes"] == 0 and summary["findings"] == 0
    assert summary.get("harness_errors", {}).get("worker-lost", 0) <= 1


@pytest.mark.ray
def test_a_lost_nodes_cases_run_again_elsewhere_and_blame_no_case(ray_cluster, tmp_path, monkeypatch):
    state = _kill_an_actor_midway(monkeypatch, lose_node=True)
    summary = campaign(tmp_path, "identity", 24)
    assert state["killed"] and state["pool"].restarts == 1 and state["pool"].requeued >= 1
    assert summary["cases"] == 24 and sum(summary["nodes"].values()) == 24
    assert summary["crashes"] == 0 and summary["findings"] == 0
    assert "worker-lost" not in summary.get("harness_errors", {})


@pytest.mark.ray
@pytest.mark.slow
def test_a_hanging_case_on_an_actor_becomes_a_hang_finding(ray_cluster, tmp_path):
    summary = campaign(tmp_path, "hang", 1, case_timeout=3)
    judged(summary)
    assert summary["cases"] == 1 and summary["hangs"] == 1 and summary["by_kind"] == {"hang": 1}


@pytest.mark.ray
def test_with_device_cuda_actors_are_scheduled_one_per_gpu(ray_cluster):
    from dynfuzz.campaign.cluster import RayPool

    pool = RayPool(CompileSpec(compiler="identity", device="cuda"), timeout=60)
    try:
        assert pool.size == 1  # the cluster has 2 CPUs but 1 GPU
        available = ray_cluster.available_resources()
        assert available.get("GPU", 0) == 0 and available.get("CPU", 0) == 2
    finally:
        pool.close()


def test_ray_without_the_extra_is_a_one_line_usage_error(tmp_path, monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "ray", None)  # `import ray` raises ImportError
    assert main(["fuzz", "--ray", "--cases", "1", "--no-db", "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "pip install 'dynfuzz[ray]'" in err


@pytest.mark.ray
def test_an_unreachable_ray_address_is_a_usage_error(tmp_path, capsys):
    pytest.importorskip("ray")
    t = time.monotonic()
    assert main(["fuzz", "--ray", "127.0.0.1:9", "--cases", "1", "--no-db", "--out", str(tmp_path)]) == 2
    assert time.monotonic() - t < 10
    assert "cannot reach the Ray cluster at 127.0.0.1:9" in capsys.readouterr().err


def test_a_campaign_without_ray_or_a_redis_url_imports_neither(tmp_path):
    """dynfuzz itself imports neither. The program is drawn from `basic` alone: torch imports redis on its own
    when a program calls `torch.cond` (torch._inductor.remote_cache, through the eager cond's compile)."""
    code = ("import sys\nfrom dynfuzz.cli import main\n"
            f"rc = main(['fuzz', '--cases', '1', '--workers', '0', '--no-progress', '--compiler', 'identity', "
            "'--family', 'basic', "
            f"'--out', {str(tmp_path / 'out')!r}, '--db', {str(tmp_path / 'db')!r}, '--shard', '1/2'])\n"
            "loaded = sorted(m for m in sys.modules if m.split('.')[0] in ('ray', 'redis'))\n"
            "print(rc, loaded)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert out.stdout.strip().splitlines()[-1] == "0 []", out.stderr[-2000:]
