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
