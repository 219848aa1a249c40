"""Tiers that never hide a bug: a refusal is a graph break torch documents, keyed by its registry id; an exception
raised inside the trace is a crash; value-comparing oracles stop at the first call that raised in one mode only.

Notes [A refusal is a documented graph break] (oracles/exceptions.py), [Refusals are keyed by what torch calls
them] (triage/buckets.py) and [Later calls follow the first divergence] (oracles/model.py)."""
from __future__ import annotations

import functools
import textwrap

import pytest
import torch
from dynfuzz.generators.case import Case
from dynfuzz.oracles.exceptions import category, exceptions, raised_in_trace
from dynfuzz.oracles.grads import grads
from dynfuzz.oracles.model import CallRecord, ExcInfo, Observation, Observations, paired_calls
from dynfuzz.run import graph_break_registry
from dynfuzz.triage.buckets import divergence_class, error_of, is_bug, tier_of
from dynfuzz.triage.explain import cheap_explanation

HAS_REGISTRY = graph_break_registry.registry() is not None
needs_registry = pytest.mark.skipif(not HAS_REGISTRY, reason=f"torch {torch.__version__} ships no graph-break "
                                    "registry")

# Under export Dynamo makes every logging.Logger method return None: int() of it raises inside the trace.
LOGGER_INT = """
    import logging
    import torch
    LOG = logging.getLogger("dynfuzz.tiers")
    def f(x):
        return x * int(LOG.getEffectiveLevel())
    def inputs(device, call=0):
        return (torch.ones(2, device=device),)
    COMPILE_OPTIONS = {"export": "strict"}
"""
# The same None, used as a condition: no exception, the wrong branch.
LOGGER_BRANCH = """
    import logging
    import torch
    LOG = logging.getLogger("dynfuzz.tiers")
    def f(x):
        return x + 1 if LOG.isEnabledFor(logging.CRITICAL) else x - 1
    def inputs(device, call=0):
        return (torch.zeros(2, device=device),)
    COMPILE_OPTIONS = {"export": "strict"}
"""
TOLIST = """
    import torch
    def f(x):
        return x + torch.tensor(x.tolist())
    def inputs(device, call=0):
        return (torch.ones(2, device=device),)
"""
HEAPIFY = """
    import heapq
    import torch
    H = [3, 1, 2]
    def f(x):
        heapq.heapify(H)
        return x + H[0]
    def inputs(device, call=0):
        return (torch.ones(2, device=device),)
"""
# Call 1 takes a branch fullgraph refuses (Tensor.tolist, not a deliberate refusal: a finding, not a skip); calls 0
# and 2 run. Eager runs three backward passes into the global W, compiled two.
REFUSES_ON_CALL_1 = """
    import torch
    W = torch.ones(2, requires_grad=True)
    MODE = [0]
    def f(x):
        if MODE[0] == 1:
            return x * torch.tensor(x.tolist()).sum() * W
        return x * W
    def inputs(device, call=0):
        return (torch.ones(2, device=device),)
    def between(call):
        MODE[0] = 1 if call == 1 else 0
    CALLS = 3
"""


def _key(source: str, finding) -> str:
    return cheap_explanation(Case(source=textwrap.dedent(source), entry="f"), finding).key


def test_an_observed_exception_from_a_none_dynamo_made_is_a_crash_not_a_refusal(judge_source):
    result = judge_source(LOGGER_INT)
    assert [(f.oracle, f.kind) for f in result.findings] == [("exceptions", "trace-exception")]
    found = result.findings[0]
    assert divergence_class(found) == "trace-exception" and tier_of("trace-exception") == "crash"
    assert is_bug("trace-exception")
    key = _key(LOGGER_INT, found)
    assert key.startswith("exceptions/trace-exception: logger global .getEffectiveLevel raising TypeError "
                          "(Observed exception)"), key
    assert "Unsupported" not in key


def test_a_wrong_traced_value_that_raises_nothing_is_a_miscompile(judge_source):
    result = judge_source(LOGGER_BRANCH)
    assert [(f.oracle, f.kind) for f in result.findings] == [("outputs", "miscompile")]
    assert tier_of(divergence_class(result.findings[0])) == "miscompile"


@needs_registry
def test_a_documented_graph_break_is_a_refusal_keyed_by_its_gb_id(judge_source):
    keys = {}
    for name, source in (("tolist", TOLIST), ("heapify", HEAPIFY)):
        result = judge_source(source, fullgraph=True)
        assert [(f.oracle, f.kind) for f in result.findings] == [("exceptions", "unsupported")], name
        found = result.findings[0]
        assert tier_of(divergence_class(found)) == "refusal" and not is_bug(divergence_class(found))
        gb_type = next(d.split(": ", 1)[1] for d in found.details if d.startswith("gb_type: "))
        gb_id = graph_break_registry.registry()[gb_type].lower()
        keys[name] = _key(source, found)
        assert f" raising Unsupported {gb_id}: {gb_type}" in keys[name], keys[name]
    assert keys["heapify"].endswith("(_heapq.heapify)"), "the catch-all type names what it declined"
    assert keys["tolist"] != keys["heapify"]


def test_a_graph_break_torch_does_not_document_is_a_crash():
    err = ExcInfo("Unsupported", "torch._dynamo.exc", "made up", gb_type="A graph break nobody registered")
    assert category(err) == "crash"
    found = exceptions(None, Observations(Observation("eager", [CallRecord(0, None, None)]),
                                          Observation("compiled", [CallRecord(0, err, None)]), fullgraph=True))
    assert [f.kind for f in found] == ["crash"] and tier_of(divergence_class(found[0])) == "crash"
    documented = ExcInfo("Unsupported", "torch._dynamo.exc", "x", gb_type="t", graph_break="gb0001: t")
    assert category(documented) == "refusal"


def test_an_exception_raised_inside_the_trace_is_told_by_type_cause_or_message():
    assert raised_in_trace(ExcInfo("Unsupported", "m", "x", gb_type="Observed exception"))
    assert raised_in_trace(ExcInfo("Unsupported", "m", "x", causes=("ObservedKeyError",), gb_type="Other"))
    assert raised_in_trace(ExcInfo("Unsupported", "m", "Observed exception"))  # before graph-break types
    assert not raised_in_trace(ExcInfo("Unsupported", "m", "call_method UserDefinedObjectVariable(x) add"))
    assert not raised_in_trace(ExcInfo("TypeError", "builtins", "x", causes=("ObservedTypeError",)))


@needs_registry
def test_the_registry_of_the_torch_under_test_names_graph_breaks():
    table = graph_break_registry.registry()
    assert table["Observed exception"] == "GB0088"
    assert graph_break_registry.documented("Observed exception", "") == "gb0088: Observed exception"
    assert graph_break_registry.documented("A graph break nobody registered", "") is None
    assert graph_break_registry.documented(None, "call_method X") is None  # a registry release types every break


LOST_TYPE = """
import torch


class MyDict(dict):
    def pick(self, *keys):
        return sum(self[k] for k in keys)


def f(x):
    d = MyDict.fromkeys(("a", "b"), 0.5)
    return x * d.pick("a", "b")


def inputs(device, call=0):
    return (torch.ones(3, device=device),)
"""


@needs_registry
def test_a_graph_break_blaming_code_eager_would_reject_is_a_crash_when_eager_ran_it():
    """gb0091 `Read uninitialized cell` says "your code may result in an error when running in eager": a finding
    exists only when eager ran the code cleanly, so Dynamo misread it (the walrus-in-a-comprehension entry)."""
    assert graph_break_registry.documented("Read uninitialized cell", "") is None
    assert graph_break_registry.documented("Attempted to read undefined local variable", "") is None
    assert graph_break_registry.documented("torch.cond: differing branch outputs", "") is not None, \
        "a higher-order op's contract, which eager does not check, stays a refusal"


def test_a_catch_all_graph_break_is_named_by_what_it_declined():
    target = graph_break_registry.target
    assert target("Dynamo does not know how to trace method `get_submodule` of class `Holder0`") == \
        "Holder.get_submodule"
    assert target("Dynamo does not know how to trace the builtin `_heapq.heapify.` This function") == "_heapq.heapify"
    assert target("does not know how to trace the builtin `<unknown module>.dict.copy.` This") == "dict.copy"
    assert target("does not know how to trace the function `<class 'torch._dynamo.variables.builtin.Dyn'>`") == "Dyn"
    assert target("Attempted to read a cell variable that has not been populated yet.") is None


def test_a_graph_break_asking_a_builtin_class_for_a_method_it_lacks_is_a_lost_type_not_a_refusal():
    assert graph_break_registry.type_lost("Explanation: Dynamo does not know how to trace method `pick` of class "
                                          "`dict`")
    assert not graph_break_registry.type_lost("Dynamo does not know how to trace method `get_submodule` of class "
                                              "`Holder0`"), "a user class: Dynamo declines its method"
    assert not graph_break_registry.type_lost("does not know how to trace method `fromkeys` of class `dict`")
    assert not graph_break_registry.type_lost("does not know how to trace method `__len__` of class `type`"), \
        "list.__len__(xs): an unbound method Dynamo declines"


@needs_registry
def test_a_subclass_method_dynamo_looks_up_on_its_base_under_fullgraph_is_a_crash(judge_source):
    """A dict subclass built by `fromkeys` in the frame: Dynamo holds it as a plain dict, and under fullgraph
    declines "method `pick` of class `dict`" (gb0156, a registered type). A 2.14.1 campaign had filed this known
    Dynamo bug as a refusal."""
    result = judge_source(LOST_TYPE, fullgraph=True)
    assert [(f.oracle, f.kind) for f in result.findings] == [("exceptions", "crash")]
    assert tier_of(divergence_class(result.findings[0])) == "crash"


@needs_registry
def test_a_graph_break_torch_calls_a_dynamo_bug_is_a_crash_not_a_refusal(judge_source):
    """`round(random.uniform(0, 0), 0)` under fullgraph: gb0178 `constant fold exception`, whose registry hint says
    "This is likely to be a Dynamo bug" (a 3-minute fullgraph campaign had filed it as a refusal)."""
    assert graph_break_registry.called_a_bug("constant fold exception")
    assert graph_break_registry.documented("constant fold exception", "") is None
    result = judge_source("""
        import random
        import torch
        def f():
            b = round(random.uniform(0, 0), 0)
        def inputs(device, call=0):
            return ()
    """, fullgraph=True)
    assert [(f.oracle, f.kind) for f in result.findings] == [("exceptions", "crash")]
    assert tier_of(divergence_class(result.findings[0])) == "crash"
    assert error_of(result.findings[0]).startswith("Unsupported (constant fold exception)")
    assert "compile_wrapper" not in error_of(result.findings[0])  # a wrapper frame names nothing


def test_without_a_registry_the_type_or_the_explicit_list_documents(monkeypatch):
    monkeypatch.setattr(graph_break_registry, "_registry_path", lambda: None)
    graph_break_registry._entries.cache_clear()
    try:
        assert graph_break_registry.registry() is None
        assert graph_break_registry.documented("Some type", "") == "Some type"  # 2.7 on: the type documents it
        assert graph_break_registry.documented("Some type", "Hint: This is likely to be a Dynamo bug.") is None
        documented = functools.partial(graph_break_registry.documented, None, via_unimplemented=True)
        assert documented("call_method UserDefinedObjectVariable(Tags) add [] {}") == "call_method"  # 2.5.1's words
        assert documented("'skip function graph_break in file x.py'") == "skip function"
        assert documented("Input tensor for tolist must be an integer tensor") == \
            "Input tensor for tolist must be an integer"  # unlisted: its first words
        # raised other than through exc.unimplemented (2.5.1's `raise Unsupported("Observed exception")`)
        assert graph_break_registry.documented(None, "call_method X", via_unimplemented=False) is None
    finally:
        graph_break_registry._entries.cache_clear()


def test_a_program_refusing_on_call_1_under_fullgraph_yields_no_later_gradient_finding(judge_source):
    result = judge_source(REFUSES_ON_CALL_1, fullgraph=True)
    assert ("exceptions", "unsupported") in [(f.oracle, f.kind) for f in result.findings]
    assert [f for f in result.findings if f.oracle in ("grads", "outputs", "effects")] == []


def test_oracles_compare_only_calls_before_a_one_sided_raise():
    err = ExcInfo("Unsupported", "torch._dynamo.exc", "x")
    eager = Observation("eager", [CallRecord(i, None, None) for i in range(3)])
    compiled = Observation("compiled", [CallRecord(0, None, None), CallRecord(1, err, None), CallRecord(2, None, None)])
    obs = Observations(eager, compiled)
    assert [e.index for e, _ in paired_calls(obs)] == [0]
    both = Observations(Observation("eager", [CallRecord(0, err, None), CallRecord(1, None, None)]),
                        Observation("compiled", [CallRecord(0, err, None), CallRecord(1, None, None)]))
    assert [e.index for e, _ in paired_calls(both)] == [0, 1]  # raised in both modes: the runs still agree
    assert grads(None, obs) == []
