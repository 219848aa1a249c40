"""Explanation by ablation, the minimization queue, and campaign filing by bucket (with doubles)."""
from __future__ import annotations

import json
import time

import pytest
from dynfuzz.campaign.campaign import Campaign, CampaignConfig
from dynfuzz.generators.case import Case
from dynfuzz.run.compilers import CompileSpec, make_compiler
from dynfuzz.run.judge import judge
from dynfuzz.triage.explain import cheap_explanation, explain
from dynfuzz.triage.queue import TriageQueue

TWO_EFFECTS = '''
import collections
import torch
D = collections.deque([1, 2], maxlen=3)
def f(x, s):
    D.appendleft(5)
    s.add(3)
    return x + len(D)
def inputs(device, call=0):
    return (torch.zeros(2, device=device), {1})
'''

METHOD_SWAP = '''
import torch
class K:
    def m(self, t):
        return t * 2
    def alt(self, t):
        return t + 1
def f(x):
    return K().m(x)
def between(call):
    K.m, K.alt = K.alt, K.m
def inputs(device, call=0):
    return (torch.linspace(-1.0, 1.0, 3, device=device),)
'''


def _finding(source: str, compiler: str):
    spec = CompileSpec(compiler)
    case = Case(source)
    (f,) = judge(case, make_compiler(spec), spec).findings
    return case, f, spec


def test_ablation_names_the_construct_the_divergence_needs():
    case, f, spec = _finding(TWO_EFFECTS, "drop-set-arg-mutation")
    assert cheap_explanation(case, f).construct == "deque-maxlen global .appendleft", "most specific first"
    e = explain(case, f, spec)
    assert e.key == "miscompile: side effect on set contents", "an explained key names the mechanism, not the receiver"
    assert cheap_explanation(case, f).key == "effects/lost-effect: deque-maxlen global .appendleft"
    assert e.responsible == ("set argument .add",) and e.ablated and 0 < e.judge_calls <= 12


def test_ablation_is_capped_by_judge_calls_not_seconds():
    case, f, spec = _finding(TWO_EFFECTS, "drop-set-arg-mutation")
    e = explain(case, f, spec, max_calls=1)
    assert e.judge_calls == 1 and e.responsible == ()


def test_recall_divergence_names_the_call_plan_perturbation():
    case, f, spec = _finding(METHOD_SWAP, "stale-class-attr")
    e = explain(case, f, spec)
    assert f.call == 1
    assert e.key == "miscompile: missing guard on function", "the guard missing and what changed between calls"
    assert e.perturbation == "plain class method =" and "plain class method =" in e.responsible


@pytest.mark.slow
def test_queue_minimizes_in_a_worker_and_drain_respects_its_deadline():
    case, f, spec = _finding(TWO_EFFECTS, "drop-set-arg-mutation")
    queue = TriageQueue(spec, budget=5.0)
    queue.submit("one", case, f)
    start = time.monotonic()
    results, left = queue.drain(time.monotonic() + 0.2)
    assert time.monotonic() - start < 10 and left == ["one"] and results == []
    queue = TriageQueue(spec, budget=5.0)
    queue.submit("one", case, f)
    results, left = queue.drain(time.monotonic() + 240)
    ((ident, status, triaged),) = results
    assert (ident, status, left) == ("one", "done", [])
    assert triaged.explanation.key == "miscompile: side effect on set contents"
    assert triaged.verdict == "reproduces" and "set" in triaged.repro


@pytest.mark.slow
def test_the_triage_worker_is_recycled_between_jobs_and_no_job_is_lost(monkeypatch):
    """The minimizer process grows like a case worker (900 MB after 11 minutes of a soak): after RECYCLE_JOBS
    jobs it is replaced between jobs, and every job still reports."""
    import dynfuzz.triage.queue as queue_module

    monkeypatch.setattr(queue_module, "RECYCLE_JOBS", 2)
    case, f, spec = _finding(TWO_EFFECTS, "drop-set-arg-mutation")
    queue = TriageQueue(spec, budget=1.0)
    pids, results = [], []
    for ident in ("a", "b", "c", "d"):
        queue.submit(ident, case, f)
        pids.append(queue.process.pid)
        while not (done := queue.poll(wait=1.0)):
            pass
        results += [(i, status) for i, status, _ in done]
    queue.close()
    assert results == [(i, "done") for i in "abcd"]
    assert queue.recycled == 1 and pids[0] == pids[1] != pids[2] == pids[3]


@pytest.mark.slow
def test_campaign_files_by_bucket_and_marks_unminimized(tmp_path):
    out = tmp_path / "out"
    summary = Campaign(CampaignConfig(budget=120, out=out, workers=1, max_cases=6, progress=False,
                                      spec=CompileSpec("perturb-output"))).run()
    assert summary["bugs"] == len(summary["buckets"]) >= 1
    assert summary["unique"] >= summary["bugs"], "`unique` still counts signatures"
    for b in summary["buckets"]:
        assert b["status"] == "unminimized" and b["key"].startswith((f"{b['oracle']}/wrong-value: ",
                                                                     f"{b['oracle']}/wrong-effect: ",
                                                                     f"{b['oracle']}/lost-effect: "))
        assert set(b) >= {"id", "key", "cause", "oracle", "count", "first_seen_seconds", "repro", "status"}
        folder = out / "findings" / b["folder"].rsplit("/", 1)[-1]
        assert (folder / "repro.py").is_file() and (folder / "report.md").is_file()
        assert 1 <= len(list((folder / "examples").glob("*.py"))) <= 5
    files = {u["file"] for u in summary["unique_findings"] if u["file"]}
    assert files and all("/examples/" in path for path in files)
    assert json.loads((out / "summary.json").read_text())["bugs"] == summary["bugs"]


def test_a_change_that_only_leads_to_the_bug_is_not_named_as_its_perturbation():
    armed = '''
import torch
ARMED = False
def f(x, s):
    if not ARMED:
        return x
    s.add(3)
    return x + 1
def between(call):
    global ARMED
    ARMED = True
def inputs(device, call=0):
    return (torch.zeros(2, device=device), {1})
'''
    case, f, spec = _finding(armed, "drop-set-arg-mutation")
    assert f.call == 1
    e = explain(case, f, spec)
    assert e.key == "miscompile: side effect on set contents", "compiled on the changed state it diverges too"
    swap_key = explain(*_finding(METHOD_SWAP, "stale-class-attr")).key
    assert swap_key == "miscompile: missing guard on function", "a missing guard names what changed between calls"


def test_triage_pool_runs_as_many_jobs_as_it_has_lanes_and_reports_leftovers_from_all(monkeypatch):
    from dynfuzz.run.compiler_base import CompileSpec
    from dynfuzz.triage.queue import TriagePool, TriageQueue, triage_lanes

    assert [triage_lanes(n) for n in (0, 1, 2, 3, 8, 16)] == [1, 1, 1, 1, 2, 5]
    monkeypatch.setattr(TriageQueue, "start",  # record what each lane was given without starting processes
                        lambda lane, ident, *rest: setattr(lane, "current", (ident, 0.0)))
    pool = TriagePool(CompileSpec(), budget=1.0, lanes=3)
    case = Case(source="def f(x):\n    return x\n")
    for i in range(5):
        pool.submit(f"k{i}", case, None)
    assert [lane.current[0] for lane in pool.lanes] == ["k0", "k1", "k2"] and pool.waiting_count() == 2
    pool.resize(4)
    assert len(pool.lanes) == 4 and pool.waiting_count() == 1
    results, left = pool.drain(0.0)
    assert results == [] and sorted(left) == [f"k{i}" for i in range(5)]


def test_dynfuzz_explain_prints_the_key_a_campaign_would_file(tmp_path, capsys):
    """The key `explain` prints is the one a campaign's ledger files the same finding under after its triage
    (compared with that ledger's bucket, not with a key written into the test)."""
    import json as _json

    from dynfuzz.campaign.ledger import Ledger
    from dynfuzz.cli import main
    from dynfuzz.triage.queue import triage_one

    program = tmp_path / "set_arg.py"
    program.write_text("DYNFUZZ = {'compiler': 'drop-set-arg-mutation', 'backend': 'eager', 'device': 'cpu'}\n"
                       + TWO_EFFECTS)
    assert main(["explain", str(program), "--json", "--no-localize"]) == 1, "a divergence: exit 1, as check"
    result = _json.loads(capsys.readouterr().out)
    assert set(result) >= {"key", "cause", "tier", "suspects", "stable"} and result["stable"] is True

    case, f, spec = _finding(TWO_EFFECTS, "drop-set-arg-mutation")

    class Inline:  # the campaign's triage lanes, run in this process
        def __init__(self):
            self.results = []

        def submit(self, ident, case, finding, meta, priority):
            if ident.startswith("localize "):  # explain ran with --no-localize
                return
            self.results.append((ident, "done", triage_one(case, finding, spec, 60.0, meta)))

    ledger = Ledger(CampaignConfig(budget=1, out=tmp_path / "campaign", spec=spec, progress=False))
    ledger.triage = Inline()
    ledger.record(case, f)
    for ident, status, payload in ledger.triage.results:
        ledger.apply_triage(ident, status, payload)
    (filed,) = ledger.filer.buckets.values()
    assert result["key"] == filed.key and result["tier"] == filed.tier

    agreeing = tmp_path / "agrees.py"
    agreeing.write_text("import torch\ndef f(x):\n    return x + 1\ndef inputs(device, call=0):\n"
                        "    return (torch.ones(2, device=device),)\n")
    assert main(["explain", str(agreeing), "--no-localize"]) == 0, "no divergence: exit 0, as check"
    assert main(["explain", str(tmp_path / "absent.py")]) == 2
    broken = tmp_path / "broken.py"
    broken.write_text("import torch\ndef f(x):\n    return x + 1\ndef inputs(device, call=0):\n"
                      "    raise ValueError('no inputs today')\n")
    assert main(["explain", str(broken), "--no-localize"]) == 2, "inputs() raising is bad input, as for check"
    assert main(["minimize", str(broken)]) == 2
