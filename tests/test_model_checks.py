"""Dynamo's model steps checked against Python's (run/model_checks.py): each check must fire on every program of
the mutant that breaks its step, name the tracker method the mutant patches, and stay silent on unmodified torch."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from dynfuzz.run.compilers import CompileSpec, make_compiler
from dynfuzz.run.judge import judge
from dynfuzz.run.model_checks import checking
from dynfuzz.triage.repro import read_program

REPO = Path(__file__).resolve().parents[1]
PROGRAMS = REPO / "bench" / "identity_programs"

# mutant -> the violation its programs must give (the tracker method named is the one the mutant patches)
EXPECTED = {
    "cell-by-name": "closure bound to another cell in UserFunctionVariable.bind_args",
    "sourceless-cell-snapshot": "closure bound to another cell in UserFunctionVariable.bind_args",
    "freevar-by-local-name": "closure bound to another cell in NestedUserFunctionVariable.bind_args",
    "deque-appendleft-appends": "container method unlike Python in DequeVariable.call_method",
    "odict-popitem-ignores-last": "container method unlike Python in OrderedDictVariable.call_method",
    "subscript-write-unmarked": "write to a pre-existing container not recorded in ListVariable.call_method",
    "inplace-arg-rebinds": "in-place operator made a new object in BuiltinVariable.call_function",
    "set-names-only": "tensor size or strides stale after a change in TensorVariable.call_method",
    "super-mro-of-typevar":
        "super() resolved another class's attribute in SuperVariable._resolved_getattr_and_source",
    "super-mutator-dropped-under-fullgraph": "container method unlike Python in SuperVariable.call_method",
    "out-resize-names-only":
        "tensor size or strides stale after a change in TorchInGraphFunctionVariable.call_function",
}

_SCRIPT = '''
import json, sys
from pathlib import Path
from dynfuzz.run.compilers import CompileSpec, make_compiler
from dynfuzz.run.model_checks import checking
from dynfuzz.run.judge import judge
from dynfuzz.triage.explain import explain, filed
from dynfuzz.triage.known import choose_finding
from dynfuzz.triage.repro import read_program
spec = CompileSpec()
for path in sys.argv[1:]:
    case = read_program(Path(path)).case
    compiler = make_compiler(spec)  # applies the mutant before the checks wrap torch's methods
    with checking() as seen:
        findings = judge(case, compiler, spec).findings
    f = choose_finding(findings, {})
    print(json.dumps([seen.first, filed(case, f, explain(case, f, spec, compiler)).key]))
'''


def _spec() -> CompileSpec:
    return CompileSpec()


@pytest.mark.parametrize("mutant", sorted(EXPECTED))
def test_a_model_step_unlike_python_is_caught_on_every_program_of_its_mutant_and_keys_it(mutant):
    """Three programs of different surfaces (an argument, a global, a local; a read-back value or the state left
    behind) per mutant: the check fires on each, and campaign triage files each under that one key."""
    programs = sorted((PROGRAMS / mutant).glob("*.py"))
    env = dict(os.environ, DYNFUZZ_MUTANTS=mutant)
    done = subprocess.run([sys.executable, "-c", _SCRIPT, *map(str, programs)], capture_output=True, text=True,
                          env=env, timeout=600)
    rows = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("[")]
    assert done.returncode == 0 and len(rows) == len(programs) == 3, done.stderr[-2000:]
    assert [first for first, _ in rows] == [EXPECTED[mutant]] * 3
    settings = " under fullgraph=True" if mutant.endswith("-under-fullgraph") else ""  # it needs that setting
    assert {key for _, key in rows} == {f"miscompile: {EXPECTED[mutant]}{settings} @dynamo"}


def test_no_model_step_check_fires_on_unmodified_torch():
    """Every benchmark program (seventy-two, over twenty-four mechanisms) agrees on unmodified torch, and no check
    may call Dynamo's step wrong there: a false violation would name a fault that is not there. The patches are
    undone after the block."""
    from torch._dynamo.variables import BuiltinVariable
    from torch._dynamo.variables.functions import UserFunctionVariable
    from torch._dynamo.variables.lists import ListVariable

    before = (vars(BuiltinVariable)["call_function"], vars(UserFunctionVariable)["bind_args"],
              vars(ListVariable)["call_method"])
    spec = _spec()
    compiler = make_compiler(spec)
    fired = {}
    for path in sorted(PROGRAMS.glob("*/*.py")):
        with checking() as seen:
            judge(read_program(path).case, compiler, spec)
        if seen.seen:
            fired[path.parent.name + "/" + path.name] = seen.seen
    assert fired == {}
    assert (vars(BuiltinVariable)["call_function"], vars(UserFunctionVariable)["bind_args"],
            vars(ListVariable)["call_method"]) == before


def test_a_check_that_cannot_decide_notes_nothing(judge_source):
    """A list of tensors sorted with a key: items no model can compare (the sort orders them) and a key function
    that is no constant. Nothing to compare with, so nothing is noted, while the plain appends before it are
    checked and agree."""
    source = '''
import torch
def f(x):
    items = [x, x + 1, x - 1]
    items.append(x * 2)
    items.sort(key=lambda t: float(t.sum()))
    return items[0]
def inputs(device, call=0):
    return (torch.linspace(-1.0, 1.0, 4, device=device),)
'''
    with checking() as seen:
        judge_source(source)
    assert seen.seen == []


def test_attribute_steps_are_decided_by_cpythons_protocol_or_not_at_all():
    """The attribute questions behind three torch 2.5.1 faults (a property setter skipped, a descriptor read back
    unbound, `hasattr(slotted, '__dict__')` true), each answered as CPython would, and left undecided where only
    running user code could tell (a `__get__` that may return itself, a class with `__getattr__`)."""
    import collections
    import inspect

    from dynfuzz.run.attribute_checks import descriptor_unbound, special_hasattr, store_past_property

    class Scaled:
        @property
        def factor(self):
            return 1

        @factor.setter
        def factor(self, v):
            pass

        @property
        def fixed(self):
            return 2

    assert store_past_property(Scaled, "factor")
    assert not store_past_property(Scaled, "fixed") and not store_past_property(Scaled, "other")
    assert not store_past_property(dict, "factor")

    class Getter:
        def __get__(desc, obj, owner=None):
            return None

    class SelfOnClass:
        def __get__(desc, obj, owner=None):
            return desc if obj is None else 1

    class Holder:
        w = Getter()
        v = SelfOnClass()

    assert descriptor_unbound(Holder, "w", inspect.getattr_static(Holder, "w"))
    assert not descriptor_unbound(Holder, "w", None)
    assert not descriptor_unbound(Holder, "v", inspect.getattr_static(Holder, "v")), "it may return itself"
    Rec = collections.namedtuple("Rec", "a b")
    assert not descriptor_unbound(Rec, "a", inspect.getattr_static(Rec, "a"))

    class Slotted:
        __slots__ = ("n",)

    class Plain:
        pass

    class Dynamic:
        def __getattr__(self, name):
            return 0

    assert special_hasattr(Slotted(), "__dict__") is False and special_hasattr(Plain(), "__dict__") is True
    assert special_hasattr(Dynamic(), "__dict__") is None and special_hasattr(Plain(), "n") is None


def test_hasattr_answered_unlike_python_is_caught_while_tracing(judge_source, monkeypatch):
    """A double of torch 2.5.1's fault: Dynamo's user-object `hasattr` answers True for any name. Tracing
    `hasattr(Slotted(), '__dict__')` under it must note the step, and nothing without it."""
    from torch._dynamo.variables import ConstantVariable
    from torch._dynamo.variables.user_defined import UserDefinedObjectVariable

    source = '''
import torch
class Slotted:
    __slots__ = ("n",)
    def __init__(self, n):
        self.n = n
def f(x):
    return x + hasattr(Slotted(1), "__dict__")
def inputs(device, call=0):
    return (torch.linspace(-1.0, 1.0, 4, device=device),)
'''
    with checking() as seen:
        judge_source(source)
    assert seen.seen == []
    monkeypatch.setattr(UserDefinedObjectVariable, "call_obj_hasattr",
                        lambda self, tx, name: ConstantVariable.create(True), raising=False)
    with checking() as seen:
        judge_source(source)
    from torch._dynamo.variables import builtin

    owner = "HasAttrBuiltinVariable" if hasattr(builtin, "HasAttrBuiltinVariable") else "BuiltinVariable"
    assert seen.seen == [f"hasattr unlike Python in {owner}.call_function"]


def test_a_descriptor_read_back_unbound_is_caught_while_tracing(judge_source, monkeypatch):
    """A double of torch 2.5.1's fault: Dynamo reads a class attribute that is a user descriptor as the descriptor
    object itself. `isinstance(Holder.w, Getter)` (False in CPython: its `__get__` returns None) traced under it
    must note the step, and nothing without it."""
    from torch._dynamo.variables import UserDefinedObjectVariable
    from torch._dynamo.variables.user_defined import UserDefinedClassVariable

    source = '''
import torch
class Getter:
    def __get__(desc, obj, owner=None):
        return None
class Holder:
    w = Getter()
def f(x):
    return x + isinstance(Holder.w, Getter)
def inputs(device, call=0):
    return (torch.linspace(-1.0, 1.0, 4, device=device),)
'''
    with checking() as seen:
        judge_source(source)
    assert seen.seen == []
    original = UserDefinedClassVariable.var_getattr

    def unbound(self, tx, name):
        if name == "w":
            return UserDefinedObjectVariable(vars(self.value)["w"])
        return original(self, tx, name)

    monkeypatch.setattr(UserDefinedClassVariable, "var_getattr", unbound)
    with checking() as seen:
        judge_source(source)
    assert seen.seen == ["descriptor returned without its __get__ in UserDefinedClassVariable.var_getattr"]


METACLASS_PROGRAMS = '''
import enum
import torch
class Meta(type):
    def __call__(cls, *args):
        cls.made = cls.made + 1
        return super().__call__(*args)
class Counted(metaclass=Meta):
    made = 0
    def __init__(self, w):
        self.w = w
class Plain(metaclass=type("PlainMeta", (type,), {"tag": 1})):
    def __init__(self, w):
        self.w = w
class Mode(enum.Enum):
    A = 1
    B = 2
def f(x):
    return x * Plain(2.0).w + Mode(2).value + 0 * COUNTED
def inputs(device, call=0):
    return (torch.linspace(-1.0, 1.0, 4, device=device),)
'''


def test_a_class_call_that_skips_its_metaclass_call_is_caught_and_only_then(judge_source):
    """Calling a class runs `type(cls).__call__`. A class with a user-written one (`Counted`) called in the frame
    must have that code inlined; a class whose metaclass has none, and an Enum (the standard library's
    `EnumType.__call__`, which Dynamo models by value), note nothing. The check fires exactly when the
    program diverges: on a torch that runs the metaclass's `__call__` (none yet, pytorch/pytorch#184820) both
    sides of the assertion flip together."""
    with checking() as seen:
        result = judge_source(METACLASS_PROGRAMS.replace("COUNTED", "0"))
    assert seen.seen == [] and not result.findings
    with checking() as seen:
        result = judge_source(METACLASS_PROGRAMS.replace("0 * COUNTED", "Counted(1.0).w * Counted.made"))
    skipped = "metaclass __call__ skipped in UserDefinedClassVariable.call_function"
    assert (skipped in seen.seen) == bool(result.findings), (seen.seen, result.findings)
