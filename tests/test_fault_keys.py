"""Explained keys name the fault inside torch: tiers, construct families, crash frames past wrappers, and the
localization that ranks torch functions (with a fake coverage spectrum, so it runs without subprocesses)."""
from __future__ import annotations

import pytest
from dynfuzz.run.torch_frames import WRAPPER_FRAMES
from dynfuzz.triage.buckets import CLASSES, TIERS, fault_key, is_bug, row_is_bug, tier_of
from dynfuzz.triage.constructs import family
from dynfuzz.triage.localize import locus_of, rank


def test_every_class_has_one_tier_and_only_miscompiles_and_crashes_are_bugs():
    assert set(TIERS) == set(CLASSES), "the tier table maps all 19 classes"
    assert {tier_of(c) for c in CLASSES} == {"miscompile", "crash", "refusal", "performance", "dynfuzz"}
    assert tier_of("wrong-value") == tier_of("lost-effect") == tier_of("missing-recompile") == "miscompile"
    assert tier_of("crash") == tier_of("hang") == tier_of("spurious-exception") == "crash"
    assert tier_of("refused") == "refusal" and tier_of("extra-recompile") == "performance"
    assert is_bug("wrong-value") and is_bug("crash") and not is_bug("wrong-value", "flaky")
    assert not is_bug("refused"), "a clean graph break under fullgraph is a feature gap, never a bug"
    assert not is_bug("extra-recompile") and not is_bug("internal-error") and not is_bug("reference-disagreement")
    assert not row_is_bug({"class": "crash", "status": "ok", "fixed_in": "2.14.1"})


def test_a_refusal_bucket_is_never_counted_in_bugs(tmp_path):
    from dynfuzz.campaign.campaign import CampaignConfig
    from dynfuzz.campaign.ledger import Ledger
    from dynfuzz.generators.case import Case
    from dynfuzz.oracles.model import finding
    from dynfuzz.run.compilers import CompileSpec

    ledger = Ledger(CampaignConfig(budget=1, out=tmp_path, spec=CompileSpec(), progress=False))
    case = Case("import torch\ndef f(x):\n    return x + 1\ndef inputs(device, call=0):\n    return (torch.ones(2),)\n")
    ledger.record(case, finding("exceptions", "unsupported", "call 0: refused", "Unsupported x",
                                details=("compiled: torch._dynamo.exc.Unsupported: x",)))
    summary = ledger.summary()
    assert summary["bugs"] == 0 and summary["refusals"] == 1 and summary["buckets"][0]["tier"] == "refusal"


@pytest.mark.parametrize("names,expected", [
    (["set-subclass argument .update", "set-subclass global .add", "set-subclass local returned"], "set-subclass"),
    (["deque-maxlen global +=", "deque-maxlen argument .extendleft", "deque-maxlen global .append"], "deque-maxlen"),
    (["tensor local .t_", "tensor argument .unsqueeze_", "tensor local .set_"], "tensor in-place metadata op"),
    (["set argument .add", "set global .add"], "set .add"),
    (["torch.cond closing over float argument", "torch.cond closing over float global"],
     "torch.cond closing over float"),
])
def test_surface_variants_of_one_construct_share_a_family(names, expected):
    assert {family(n) for n in names} == {expected}


def test_different_methods_of_a_builtin_container_are_different_families():
    assert family("set argument .add") != family("set argument .discard")
    assert family("list global .append") != family("list global .extend")


def test_fault_keys_carry_the_tier_not_the_oracle():
    lost = fault_key("lost-effect", "set-subclass", layer="dynamo")
    wrong = fault_key("wrong-value", "set-subclass", layer="dynamo")
    assert lost == wrong == "miscompile: set-subclass @dynamo", "one fault, seen as a lost effect or a wrong output"
    assert fault_key("crash", None, error="IndexError in torch/_dynamo/x.py:f") == \
        "crash: raising IndexError in torch/_dynamo/x.py:f"
    assert fault_key("wrong-value", "list .append", locus="torch/_dynamo/side_effects.py:SideEffects.codegen",
                     layer="dynamo") == \
        "miscompile: list .append near torch/_dynamo/side_effects.py:SideEffects.codegen @dynamo"


def test_a_crash_key_names_the_first_frame_that_is_not_a_wrapper(tmp_path):
    """Following __cause__ past Dynamo's wrapper exceptions to the frame that broke: modules laid out like
    torch's (a wrapper that re-raises `from` the error, and the handler that raised it)."""
    import importlib.util

    from dynfuzz.run.execute import exc_info, key_frame

    assert {"torch/_dynamo/exc.py:unimplemented", "torch/_dynamo/eval_frame.py:compile_wrapper",
            "torch/_dynamo/utils.py:run_node", "torch/_dynamo/eval_frame.py:_fn",
            "torch/_dynamo/variables/script_object.py:graph_break_as_hard_error"} <= WRAPPER_FRAMES

    def module(rel: str, text: str):
        path = tmp_path / "torch" / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        spec = importlib.util.spec_from_file_location(rel.replace("/", "_")[:-3], path)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        return mod

    lists = module("_dynamo/variables/lists.py", "def call_method(items):\n    return items[5]\n")
    utils = module("_dynamo/utils.py", "def run_node(fn, arg):\n    try:\n        return fn(arg)\n"
                                       "    except Exception as e:\n        raise RuntimeError('wrapped') from e\n")
    with pytest.raises(RuntimeError) as raised:
        utils.run_node(lists.call_method, [1])
    assert key_frame(raised.value) == "torch/_dynamo/variables/lists.py:call_method"
    info = exc_info(raised.value)
    assert info.torch_frame == "torch/_dynamo/utils.py:run_node", "the signature's frame stays the innermost one"
    assert info.key_frame == "torch/_dynamo/variables/lists.py:call_method"


def test_localization_ranks_the_function_only_failing_runs_reach_and_keys_it_by_margin():
    """Two surface variants of one fixture fault: their failing runs share the faulty function and their passing
    neighbours do not reach it, so both rank it first and the key names the same locus."""
    common = {"torch/_dynamo/symbolic_convert.py:InstructionTranslator.step": {10},
              "torch/_dynamo/variables/builder.py:VariableBuilder.__call__": {20}}
    faulty = {"torch/_dynamo/side_effects.py:SideEffects.codegen_update_mutated": {30, 31}}
    method_a = {"torch/_dynamo/variables/lists.py:ListVariable.call_method": {40}}
    method_b = {"torch/_dynamo/variables/lists.py:ListVariable.extend": {50}}
    variant_a = rank([{**common, **faulty, **method_a}], [common, {**common, **method_a}])
    variant_b = rank([{**common, **faulty, **method_b}, {**common, **faulty}], [common, {**common, **method_b}])
    assert variant_a[0]["function"] == variant_b[0]["function"] == \
        "torch/_dynamo/side_effects.py:SideEffects.codegen_update_mutated"
    assert locus_of(variant_a) == locus_of(variant_b) == variant_a[0]["function"]
    tied = rank([{**common, **faulty, **method_a}], [common])
    assert locus_of(tied) is None, "two functions only the failing run reaches: no clear leader, no locus"
    even = {"torch/b.py:g": {1}, "torch/a.py:f": {2}}  # reached by the same runs: tied, broken by the name
    assert [r["function"] for r in rank([even], [{}])] == ["torch/a.py:f", "torch/b.py:g"]
    assert rank([dict(reversed(even.items()))], [{}]) == rank([even], [{}]), "independent of the order reached"


def test_objects_made_by_a_metaclass_are_a_family_apart_from_plain_objects():
    """A metaclass's __call__ makes instances through a path of Dynamo's own: a fault there must not share a
    family (and so a known issue) with every other user-object method call."""
    from dynfuzz.triage.constructs import classify

    source = ("import torch\nclass Meta(type):\n    def __call__(cls, *a):\n        return super().__call__(*a)\n"
              "class C(metaclass=Meta):\n    def m(self, t):\n        return t\nclass D(C):\n    pass\n"
              "class P:\n    def m(self, t):\n        return t\n"
              "def f(x):\n    return C().m(x) + D().m(x) + P().m(x)\n"
              "def inputs(device, call=0):\n    return (torch.ones(2),)\n")
    families = {family(c.name) for c in classify(source)}
    assert "metaclass-object method call" in families and "object method call" in families
