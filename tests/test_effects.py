"""The `effects` family: valid programs covering its features, small shrinks, doubles caught by the
right oracle, silence on correct effect programs, and a snapshot that sees what the family changes."""
from __future__ import annotations

import collections

import pytest
import torch
from dynfuzz.generators import case_seed, draw_case, programs
from dynfuzz.generators.render import render
from dynfuzz.oracles.snapshot import diff, take
from dynfuzz.run.execute import observe
from dynfuzz.sample import intended
from hypothesis import HealthCheck, find, settings

from tests.conftest import run_source

FAMILY = ("effects",)


def _cases(n: int, seed: int = 8):
    return [draw_case(case_seed(seed, i), FAMILY) for i in range(n)]


# ---- the generator ------------------------------------------------------------------------------


def test_programs_are_deterministic():
    assert draw_case(31, FAMILY).source == draw_case(31, FAMILY).source


def test_drawn_programs_run_eagerly_as_intended():
    for case in _cases(120):
        obs = observe(case.source, case.entry, "cpu", None, "eager")
        assert intended(case, obs), case.source


def test_drawn_programs_cover_every_topic():
    tags = set().union(*(c.tags for c in _cases(200, seed=9)))
    wanted = {
        "container-list", "container-dict", "container-set", "container-deque", "container-deque-maxlen",
        "container-odict", "container-defaultdict", "container-defaultdict-list", "container-bytearray",
        "container-tuple", "container-frozenset", "via-method", "via-subscript", "via-slice", "via-del",
        "via-augassign", "augassign-immutable", "where-arg", "where-global", "where-cell", "where-object",
        "subclass-override", "subclass-plain", "object-new", "attr-del", "dict-update", "property",
        "class-attr", "method-replace-class", "method-replace-instance", "tensor-element", "hook-input",
        "hook-intermediate", "handle-removed", "handle-kept", "saved-tensors-hooks", "autograd-function",
        "ordering", "alias-global-cell", "alias-args", "probe-float-sign", "probe-dtype", "probe-requires-grad",
        "probe-key-order", "probe-length", "probe-elem-type",
    }
    assert wanted <= tags, sorted(wanted - tags)


@pytest.mark.parametrize("needle", ["remove()", "saved_tensors_hooks", "OrderedDict", "super()", "Cfg"])
def test_a_failure_depending_on_one_construct_shrinks_small(needle):
    quick = settings(database=None, derandomize=True, max_examples=300, suppress_health_check=list(HealthCheck))
    smallest = find(programs(FAMILY), lambda p: needle in render(p), settings=quick)
    lines = [line for line in render(smallest).splitlines() if line.strip()]
    assert len(lines) <= 15, "\n".join(lines)


# ---- doubles, each caught by the right oracle ---------------------------------------------------

SET_ARG = """
import torch

def f(x, s):
    s |= {3}
    return x + len(s)

def inputs(device, call=0):
    return (torch.ones(3, device=device), {1, 2})
"""

CLASS_ATTR = """
import torch

class Cfg:
    scale = 2

def f(x):
    return x * Cfg.scale

def inputs(device, call=0):
    return (torch.ones(3, device=device),)

def between(call):
    Cfg.scale = call + 2
"""

HOOKS = """
import torch

SEEN = []

def record(grad):
    SEEN.append(grad.detach().clone())

def f(x, g):
    g.register_hook(lambda grad: grad * 3)
    h = g * 2
    h.register_hook(record)
    return x + 1, h.sin()

def inputs(device, call=0):
    return (torch.ones(3, device=device), torch.linspace(-1.0, 1.0, 3, device=device).requires_grad_())
"""


def _oracles(result) -> set[tuple[str, str]]:
    return {(f.oracle, f.kind) for f in result.findings}


def test_dropped_set_argument_mutation_is_an_effect_lost():
    assert _oracles(run_source(SET_ARG, compiler="drop-set-arg-mutation")) == {("effects", "effect-lost")}
    assert run_source(SET_ARG, compiler="identity").findings == []


def test_stale_entry_after_class_attribute_change_is_a_miscompile():
    result = run_source(CLASS_ATTR, compiler="stale-class-attr")
    assert _oracles(result) == {("outputs", "miscompile")}
    assert result.findings[0].call == 1
    assert run_source(CLASS_ATTR, compiler="identity").findings == []


def test_hooks_are_seen_by_the_gradients_and_records_they_produce():
    result = run_source(HOOKS, compiler="drop-hooks")
    by_oracle = {f.oracle: " ".join(f.details) for f in result.findings}
    assert set(by_oracle) == {"effects", "grads"}
    assert ".grad" in by_oracle["grads"] and "SEEN" in by_oracle["effects"]
    assert run_source(HOOKS, compiler="identity").findings == []


# ---- silence on correct programs ----------------------------------------------------------------

CORRECT = {
    "containers": """
import torch
import collections

G = [1, 2]
OD = collections.OrderedDict([("a", 1), ("b", 2)])

def f(x, d, s, q):
    G.append(3)
    G[0:1] = [5, 6]
    d["k"] = 4
    d.setdefault("j", 1)
    s |= {7}
    s.discard(1)
    q.appendleft(0)
    q.rotate(1)
    OD.move_to_end("a")
    return x + len(G) + sum(d.values()) + sum(s) + sum(q)

def inputs(device, call=0):
    return (torch.ones(3, device=device), {"a": 1}, {1, 2}, collections.deque([1, 2]))
""",
    "objects": """
import torch

class MyList(list):
    n = 0
    def append(self, v):
        self.n = self.n + 1
        super().append(v)

class Obj:
    def __init__(self, a):
        self.a = a
        self.b = 1
    @property
    def double(self):
        return self.a * 2

OB = Obj(1)
KEEP = {}

def f(x, m):
    m.append(3)
    OB.a = OB.a + 1
    if hasattr(OB, "b"):
        del OB.b
    OB.__dict__.update({"e": 2})
    n = Obj(4)
    n.t = x.sum()
    KEEP["last"] = n
    return x + OB.double + len(m) + m.n, n

def inputs(device, call=0):
    return (torch.ones(3, device=device), MyList([1]))
""",
    "autograd": """
import torch

class Sq(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx, grad):
        return grad * 2 * ctx.saved_tensors[0]

def pack(t):
    return t * 2

def unpack(t):
    return t / 2

def f(x, g):
    g.register_hook(lambda grad: grad * 2)
    with torch.autograd.graph.saved_tensors_hooks(pack, unpack):
        u = (g * g).cos()
    return x + 1, u, Sq.apply(torch.tanh(g))

def inputs(device, call=0):
    return (torch.ones(3, device=device), torch.linspace(-1.0, 1.0, 3, device=device).requires_grad_())
""",
    "probes": """
import math
import torch

class K:
    def m(self, t):
        return t * 2

KOBJ = K()

def f(x, s, d, y):
    acc = 0
    for k in d:
        acc = acc * 3 + d[k]
    return KOBJ.m(x) * math.copysign(1.0, s) + acc, y.sin() + 1

def inputs(device, call=0):
    s, d, y = 0.0, {"a": 1, "b": 2}, torch.linspace(0.0, 1.0, 3, device=device)
    if call == 1:
        s, d, y = -0.0, {"b": 2, "a": 1}, y.double().requires_grad_()
    return (torch.ones(3, device=device), s, d, y)

CALLS = 3

def between(call):
    if call == 2:
        KOBJ.m = lambda t: t - 1
""",
}


@pytest.mark.slow
@pytest.mark.parametrize("compiler", ["identity", "torch"])
@pytest.mark.parametrize("name", sorted(CORRECT))
def test_correct_effect_programs_raise_no_finding(name, compiler):
    result = run_source(CORRECT[name], compiler=compiler)
    assert result.eager_ok
    assert result.findings == [], [f.title for f in result.findings]


# ---- what the snapshot sees ---------------------------------------------------------------------


def _differs(a, b) -> set[str]:
    return {aspect for _, aspect, _, _ in diff(take(a), take(b))}


def test_snapshot_sees_container_order():
    assert _differs([1, 2], [2, 1]) == {"value"}
    assert "keys" in _differs({"a": 1, "b": 2}, {"b": 2, "a": 1})
    assert "keys" in _differs(collections.OrderedDict(a=1, b=2), collections.OrderedDict(b=2, a=1))
    assert _differs(collections.deque([1, 2]), collections.deque([2, 1]))
    assert not _differs(collections.deque([1, 2], maxlen=3), collections.deque([1, 2], maxlen=3))


def test_snapshot_sees_subclass_types_and_their_attributes():
    class MyList(list):
        pass

    tagged = MyList([1])
    tagged.n = 1
    assert "type" in _differs([1], MyList([1]))
    assert "attributes" in _differs(MyList([1]), tagged)
    assert "type" in _differs({1}, frozenset({1}))


def test_snapshot_sees_object_and_class_attributes():
    cls = type("Cfg", (), {"scale": 2, "__module__": "dynfuzz_program"})
    before = take(cls)
    cls.scale = 3
    assert diff(before, take(cls))
    obj_a, obj_b = cls(), cls()
    obj_a.w = torch.zeros(2)
    obj_b.w = torch.ones(2)
    assert _differs(obj_a, obj_b) == {"values"}
    del obj_b.w
    assert "attributes" in _differs(obj_a, obj_b)


def test_snapshot_sees_aliasing_between_containers():
    shared = [1, 2]
    assert _differs({"a": shared, "b": shared}, {"a": [1, 2], "b": [1, 2]})
    other = [1, 2]
    assert not _differs({"a": shared, "b": shared}, {"a": other, "b": other})
