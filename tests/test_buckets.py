"""Bucket keys: the closed class list, the key's form and id, and the classifier's names.

The key must not depend on names, output slot, state path, call index, message text or process; these
tests change each of those and check that the key stays, and change the construct and check it moves.
"""
from __future__ import annotations

import hashlib
import re

import pytest
from dynfuzz.generators.case import Case
from dynfuzz.oracles.model import finding
from dynfuzz.triage.buckets import CLASSES, bucket_id, bucket_key, divergence_class, error_of, folder_name, slug
from dynfuzz.triage.constructs import classify
from dynfuzz.triage.explain import cheap_explanation

SET_UPDATE = '''
import torch
class Tags(set):
    pass
def f(x, tags):
    tags.update({0})
    return x + len(tags)
def inputs(device, call=0):
    return (torch.zeros(2, device=device), Tags({1}))
'''

SET_UPDATE_RENAMED = '''
import torch
class Labels(set):
    pass
LOG = []
def f(inp, labels, other):
    LOG.append(1)
    w = inp.sin()
    labels.update({0, 7})
    return w, inp * 2 + len(labels)
def inputs(device, call=0):
    t = torch.ones(3, 4, device=device)
    s = Labels({1})
    return (t, s, 2)
'''


def test_key_form_id_and_slug():
    key = bucket_key("effects", "lost-effect", "set-subclass argument .update")
    assert key == "effects/lost-effect: set-subclass argument .update"
    assert bucket_id(key) == hashlib.sha256(key.encode()).hexdigest()[:12]
    full = bucket_key("outputs", "wrong-value", "math.copysign on float argument", "float argument changes",
                      "AssertionError in torch/_dynamo/x.py:f", "dynamo")
    assert full == ("outputs/wrong-value: math.copysign on float argument after float argument changes "
                    "raising AssertionError in torch/_dynamo/x.py:f @dynamo")
    assert re.fullmatch(r"[a-z0-9-]+", slug(full)) and len(slug(full)) <= 48
    assert folder_name(key) == f"{slug(key)}-{bucket_id(key)}"
    with pytest.raises(ValueError):
        bucket_key("outputs", "not-a-class", "x")


@pytest.mark.parametrize("oracle,kind,details,cls", [
    ("effects", "effect-lost", (), "lost-effect"),
    ("effects", "effect-mismatch", (), "wrong-effect"),
    ("outputs", "miscompile", ("out[0]: values: expected [1.0], got [2.0]",), "wrong-value"),
    ("outputs", "miscompile", ("out[1]: stride: expected (1, 3), got (3, 1)",), "stale-metadata"),
    ("outputs", "miscompile", ("out: identity: expected 'same object as #1', got 'same object as #2'",),
     "wrong-aliasing"),
    ("exceptions", "crash", (), "crash"),
    ("guards", "guard-unsound", (), "missing-recompile"),
    ("recompiles", "over-guard", (), "extra-recompile"),
    ("illegal", "miscompile", (), "accepted-illegal"),
    ("harness", "hang", (), "hang"),
    ("reference", "reference-bug", (), "reference-disagreement"),
    ("harness", "harness-error", (), "internal-error"),
])
def test_every_finding_maps_into_the_closed_class_list(oracle, kind, details, cls):
    f = finding(oracle, kind, "m", "k", details=details)
    assert divergence_class(f) == cls and cls in CLASSES


def test_crash_error_is_type_and_innermost_frame_never_message():
    one = finding("exceptions", "crash", "call 0: compiler crashed", "InternalTorchDynamoError a",
                  details=("compiled: torch._dynamo.exc.InternalTorchDynamoError: RecursionError: depth 991",),
                  torch_frame="torch/_dynamo/variables/user_defined.py:call_method")
    two = finding("exceptions", "crash", "call 1: compiler crashed", "InternalTorchDynamoError b",
                  details=("compiled: torch._dynamo.exc.InternalTorchDynamoError: RecursionError: depth 37",),
                  torch_frame="torch/_dynamo/variables/user_defined.py:call_method")
    assert error_of(one) == error_of(two) == "InternalTorchDynamoError (RecursionError)", \
        "where a recursion runs out of stack differs between a campaign worker and the parent"
    three = finding("exceptions", "crash", "call 0: compiler crashed", "AssertionError x",
                    details=("compiled: AssertionError: a message that varies 123",),
                    torch_frame="torch/_dynamo/output_graph.py:lift")
    assert error_of(three) == "AssertionError in torch/_dynamo/output_graph.py:lift"
    assert error_of(finding("effects", "effect-lost", "m", "k")) is None


def test_classifier_names_corpus_style_constructs():
    names = [c.name for c in classify(SET_UPDATE)]
    assert names[0] == "set-subclass argument .update"
    bounded = "import collections\nimport torch\nd = collections.deque([1], maxlen=2)\n" \
              "def f(x):\n    d.appendleft(9)\n    return x + 1\n" \
              "def inputs(device, call=0):\n    return (torch.zeros(2),)\n"
    assert classify(bounded)[0].name == "deque-maxlen global .appendleft"
    sign = "import math\nimport torch\ndef f(x, s):\n    return x + math.copysign(1.0, s)\n" \
           "def inputs(device, call=0):\n    s = 0.0\n    if call == 1:\n        s = -0.0\n    return (x, s)\n"
    by_role = {c.role: c.name for c in classify(sign)}
    assert by_role == {"construct": "math.copysign on float argument", "perturbation": "float argument changes"}


def test_cheap_key_ignores_names_slot_path_call_and_message():
    a = finding("effects", "effect-lost", "call 0: args[1] members differs", "args[1]:members@set-subclass",
                call=0)
    b = finding("effects", "effect-lost", "call 1: args[1] length differs after the call", "other key", call=1)
    key_a = cheap_explanation(Case(SET_UPDATE), a).key
    key_b = cheap_explanation(Case(SET_UPDATE_RENAMED), b).key
    assert key_a == key_b == "effects/lost-effect: set-subclass argument .update"
    assert a.signature != b.signature, "signatures split what the bucket key keeps together"


def test_different_constructs_get_different_keys():
    lost = finding("effects", "effect-lost", "m", "k")
    as_global = SET_UPDATE.replace("def f(x, tags):", "tags = Tags({1})\ndef f(x):").replace(
        "return (torch.zeros(2, device=device), Tags({1}))", "return (torch.zeros(2, device=device),)")
    keys = {cheap_explanation(Case(src), lost).key for src in (SET_UPDATE, as_global)}
    assert keys == {"effects/lost-effect: set-subclass argument .update",
                    "effects/lost-effect: set-subclass global .update"}


def test_one_bug_written_two_ways_gets_one_key():
    """A one-hour soak filed two known bugs again under new keys: a hook handle removed through a temporary
    (`x.register_hook(h).remove()`) rather than a local, and dynamic shapes asked for through
    DYNAMO_CONFIG's assume_static_by_default=False rather than dynamic=True. Dynamo treats each pair alike."""
    crash = finding("exceptions", "crash", "m", "k", details={"error": "AssertionError",
                                                            "frame": "torch/_dynamo/variables/user_defined.py:f"})
    local = "import torch\ndef f(a):\n    h = (a * 0).register_hook(lambda b: b)\n    h.remove()\n" \
            "def inputs(device, call=0):\n    return (torch.zeros(2).requires_grad_(),)\n"
    temporary = "import torch\ndef f(a):\n    (a * 0).register_hook(lambda b: b).remove()\n" \
                "def inputs(device, call=0):\n    return (torch.zeros(2).requires_grad_(),)\n"
    assert cheap_explanation(Case(local), crash).key == cheap_explanation(Case(temporary), crash).key
    dynamic = "import torch\ndef f(x):\n    return x.sum()\ndef inputs(device, call=0):\n    return (torch.ones(2),)\n"
    names = [{c.name for c in classify(dynamic + extra) if c.role == "setting"}
             for extra in ("COMPILE_OPTIONS = {'dynamic': True}\n",
                           "DYNAMO_CONFIG = {'assume_static_by_default': False}\n")]
    assert names == [{"dynamic=True"}, {"dynamic=True"}]


def test_ablation_removes_exactly_the_construct():
    (construct,) = [c for c in classify(SET_UPDATE) if c.name == "set-subclass argument .update"]
    ablated = construct.ablate(SET_UPDATE)
    assert ".update" not in ablated and "return x + len(tags)" in ablated
    compile(ablated, "<ablated>", "exec")


def test_a_walrus_in_a_comprehension_is_named_when_nothing_more_specific_is():
    """A fullgraph refusal of `[c for i in range(0) if (c := i) > 0]` was keyed `tensor ops` (nothing named),
    a key that would match any unnamed refusal; the walrus is named, ranked after every specific construct."""
    plain = "import torch\ndef f():\n    a = [c for i in range(0) if (c := i) > 0]\n" \
            "def inputs(device, call=0):\n    return ()\n"
    assert classify(plain)[0].name == "walrus in a comprehension"
    with_call = plain.replace("    a = [", "    L.append(1)\n    a = [").replace("def f", "L = []\ndef f")
    assert classify(with_call)[0].name == "list global .append"
