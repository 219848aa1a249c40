"""Dynamo's behaviours as the coverage signal: normalised names, what one case records (counters, guard trees,
backend graphs, the count-only observers), the universe and its out-of-reach list, and the campaign's log.

Runs on every torch dynfuzz supports (`tox -e torch251` for 2.5.1, which has no graph-break registry)."""
from __future__ import annotations

import pytest
from dynfuzz.campaign.behaviour_log import BehaviourLog, novelty_reward
from dynfuzz.generators.case import Case
from dynfuzz.run import torch_observers
from dynfuzz.run.behaviours import (
    collect,
    full_universe,
    normalise,
    normalise_recompile,
    out_of_reach,
    universe,
    universe_key,
)
from dynfuzz.run.compilers import CompileSpec, make_compiler
from dynfuzz.run.judge import judge

PROGRAM = '''
import torch

LOG = []

def body(x):
    return x.cos()

def f(x, n):
    y = x.sin() + n
    LOG.append(1)
    torch._dynamo.graph_break()
    z = torch.cond(y.sum() > 0, body, body, (y,))
    return z * len(LOG)

def inputs(device, call=0):
    return (torch.ones(2 + call, device=device), call)
'''


def test_a_registry_type_is_kept_and_other_messages_lose_what_is_the_programs():
    types = {"Call to `torch._dynamo.graph_break()`"}
    message = "Call to `torch._dynamo.graph_break()`\n  Explanation: user-inserted graph break. Message: None"
    assert normalise(message, types) == "Call to `torch._dynamo.graph_break()`"
    # torch 2.5.1's free-text messages: the arguments and constants go, the operation stays
    a = normalise("call_function BuiltinVariable(print) [ConstantVariable(int: 3), TensorVariable()] {}")
    b = normalise("call_function BuiltinVariable(print) [TensorVariable()] {'sep': ConstantVariable(str: 'x')}")
    assert a == b == "call_function BuiltinVariable(print) […] {…}"
    assert normalise("0/1: Graph break in user code at <dynfuzz-42-7-compiled>:12") == \
        "Graph break in user code at <dynfuzz-#-#-compiled>:#"
    assert normalise("'skip function graph_break in file /v/lib/python3.11/site-packages/torch/_dynamo/"
                     "decorators.py'") == "skip function graph_break in file torch/_dynamo/decorators.py"
    assert normalise("inline in skipfiles: g | f /home/u/prog.py") == "inline in skipfiles: g | f …/prog.py"


@pytest.mark.parametrize(("reason", "name"), [
    ("0/1: len(ints0) == 3  # fs0 = frozenset(ints0)  # <dynfuzz-1-2-compiled>:3 in f", "len(S) == #"),
    ("1/0: len(L['xs']) == 2", "len(S) == #"),
    ("0/0: tensor 'x' size mismatch at index 0. expected 3, actual 4",
     "tensor '…' size mismatch at index #. expected #, actual #"),
    ("1/0: fn0.__closure__[0].cell_contents == 2  # pn0 = pn0 + 1  # <x>:3 in closure (HINT: guard on 'a')",
     "S.__closure__[…].cell_contents == #"),
    ("0/0: not ___dict_contains('n', L['self'].__dict__)  # x", "not ___dict_contains('…', S.__dict__)"),
    ("0/0: self.training == True  # if self.training:", "S == True"),
    ("0/0: tensor 'G['G0']' stride mismatch at index 0. expected 1, actual 2",
     "tensor '…' stride mismatch at index #. expected #, actual #"),
    ("0/0: Duplicate tensor found where not expected!", "Duplicate tensor found where not expected!"),
])
def test_recompile_reasons_name_the_guard_that_failed_not_the_program(reason, name):
    assert normalise_recompile(reason) == name


def test_one_case_records_counters_guard_trees_graphs_and_observers():
    spec = CompileSpec(backend="eager")
    compiler = make_compiler(spec)
    assert set(torch_observers.installed()) == set(torch_observers.OBSERVERS)
    result = judge(Case(source=PROGRAM, seed=None), compiler, spec)
    got = set(result.behaviours)
    assert result.observers == tuple(torch_observers.installed())
    breaks = {b for b in got if b.startswith("graph-break:")}
    assert any("graph_break" in b for b in breaks), breaks
    assert "hop:cond" in got
    assert {"guard:TENSOR_MATCH", "tracker:ListVariable", "side-effect:ListVariable.value.existing"} <= got
    assert any(b.startswith("accessor:") for b in got)
    assert any(b.startswith("recompile:") for b in got), got  # the second call's size differs
    # the next case starts from nothing
    again = judge(Case(source="import torch\ndef f(x):\n    return x + 1\ndef inputs(device, call=0):\n"
                             "    return (torch.ones(2),)\n", seed=None), compiler, spec)
    assert not {b for b in again.behaviours if b.startswith(("graph-break:", "hop:", "side-effect:", "recompile:"))}
    assert collect() == again.behaviours


def test_the_universe_comes_from_the_running_torch_minus_what_is_out_of_reach():
    full = full_universe()
    reach = universe(full)
    assert {"ListVariable", "UserFunctionVariable", "TensorVariable"} <= reach["tracker"]
    assert {"TENSOR_MATCH", "TYPE_MATCH", "ID_MATCH"} <= reach["guard"]
    assert "cond" in reach["hop"] and "triton_kernel_wrapper_mutation" in full["hop"] - reach["hop"]
    assert out_of_reach("tracker", "VariableTracker") and out_of_reach("tracker", "ProcessGroupVariable")
    assert out_of_reach("hop", "cond") is None
    # class names match case-sensitively (`DTensor` is not in `DisabledSavedTensorsHooksVariable`), and what the
    # generators reach is never out of reach
    for reached in ("DisabledSavedTensorsHooksVariable", "GradInplaceRequiresGradCtxManagerVariable",
                    "NumpyNdarrayVariable", "TorchScriptObjectVariable"):
        assert out_of_reach("tracker", reached) is None, reached
    types = torch_observers.registry_types()
    if types is None:  # torch < 2.7 (2.5.1): no registry, graph breaks are an open category there
        assert full["graph-break"] == set()
    else:
        assert "Call to `torch._dynamo.graph_break()`" in reach["graph-break"]
        assert len(reach["graph-break"]) < len(full["graph-break"])
    assert universe_key("unsupported:X") == ("graph-break", "X")


def test_the_log_counts_new_behaviours_pairs_rarity_and_what_was_never_reached():
    log = BehaviourLog()
    first = log.add(("guard:TYPE_MATCH", "tracker:ListVariable"), 1.0)
    assert set(first.singles) == {"guard:TYPE_MATCH", "tracker:ListVariable"} and first.pairs == 1
    again = log.add(("guard:TYPE_MATCH", "tracker:ListVariable"), 2.0)
    assert again.singles == () and again.pairs == 0 and again.rarity == pytest.approx(1.0)
    third = log.add(("guard:TYPE_MATCH", "hop:cond", "tracker:ListVariable"), 3.0)
    assert third.singles == ("hop:cond",) and third.pairs == 2
    assert novelty_reward(third) > novelty_reward(again) > novelty_reward(None) == 0.0
    assert log.pair_rarity(["hop:cond", "guard:TYPE_MATCH"]) == pytest.approx(1.0)
    summary = log.summary()
    assert summary["distinct"] == 3 and summary["pairs"] == 3 and summary["cases"] == 3
    assert summary["reached"]["hop:cond"] == [1, 3, 3.0]  # cases, first case, first second
    assert [p[2] for p in summary["timeline"]] == [2, 3]
    assert "cond" not in summary["never_reached"]["hop"] and "cond" not in summary["never_reached"]["guard"]
    assert "ListVariable" not in summary["never_reached"]["tracker"]
    assert "TensorVariable" in summary["never_reached"]["tracker"]
    assert summary["universe"]["hop"]["reached"] == 1
    assert summary["universe_reached"] == 3


def test_the_summary_lists_the_observers_and_whether_they_ran():
    record = torch_observers.record({"side-effects"})
    assert set(record) == set(torch_observers.OBSERVERS)
    assert record["side-effects"]["installed"] and not record["variable-trackers"]["installed"]
    assert "VariableTracker.__init__" in record["variable-trackers"]["target"]


def test_uninstalling_restores_what_the_observers_patched_and_stops_recording():
    """The observers are patches of two torch methods, recorded for undoing: uninstalled, the originals are
    back and a case reads no behaviour; installed again, they record again."""
    from torch._dynamo.side_effects import SideEffects
    from torch._dynamo.variables.base import VariableTracker

    spec = CompileSpec(backend="eager")
    compiler = make_compiler(spec)
    patched = VariableTracker.__init__, SideEffects.codegen_update_mutated
    torch_observers.uninstall()
    try:
        assert (VariableTracker.__init__, SideEffects.codegen_update_mutated) != patched
        assert "torch/_dynamo" in VariableTracker.__init__.__code__.co_filename
        assert torch_observers.installed() == [] and not torch_observers.recording()
        assert judge(Case(source=PROGRAM, seed=None), compiler, spec).behaviours == ()
    finally:
        torch_observers.install()
    assert set(torch_observers.installed()) == set(torch_observers.OBSERVERS)
    assert "tracker:ListVariable" in judge(Case(source=PROGRAM, seed=None), compiler, spec).behaviours
