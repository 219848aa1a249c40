"""The `classes` family: user-defined classes, nn.Modules, autograd.Function, torch.func, checkpoint and
functions Dynamo treats specially. Each construct has a share of the family, its programs run eagerly, the
rendered source holds the construct, and a short campaign finds each of the family's Dynamo mutants
(`super-mro-of-typevar`, harness/mutants/classes.py, and `specialized-modulelist-reversed`,
harness/mutants/export.py), which the same campaign with the mutant's construct switched off does not."""
from __future__ import annotations

import ast
from collections import Counter
from functools import lru_cache

import pytest
from dynfuzz.generators import case_seed, draw_case
from dynfuzz.mutants import load
from dynfuzz.run.execute import observe
from dynfuzz.sample import intended

N = 200


def _is_call(name: str):
    return lambda node: isinstance(node, ast.Call) and ast.unparse(node.func).endswith(name)


def _decorated(name: str):
    return lambda node: isinstance(node, ast.FunctionDef) and any(name in ast.unparse(d) for d in node.decorator_list)


def _defines(method: str):
    return lambda node: isinstance(node, ast.FunctionDef) and node.name == method


def _class_with_base(base: str):
    return lambda node: isinstance(node, ast.ClassDef) and any(base in ast.unparse(b) for b in node.bases)


# tag -> what its programs must contain (any AST node matching)
CONSTRUCTS = {
    "class-methods": _decorated("setter"),
    "class-property": _decorated("property"),
    "class-static": lambda n: _decorated("classmethod")(n) or _decorated("staticmethod")(n),
    "class-super": _is_call("super"),
    "class-mro": lambda n: isinstance(n, ast.ClassDef) and len(n.bases) >= 3,
    "class-isinstance": _is_call("isinstance"),
    "class-local": lambda n: isinstance(n, ast.FunctionDef) and n.name == "f" and any(
        isinstance(s, ast.ClassDef) or "type(" in ast.unparse(s) for s in n.body),
    "class-call": _defines("__call__"),
    "class-container": _defines("__contains__"),
    "class-operators": _defines("__radd__"),
    "class-numeric": _defines("__rxor__"),
    "nn-containers": lambda n: isinstance(n, ast.ClassDef) and "ModuleList" in ast.unparse(n) and "ModuleDict" in
    ast.unparse(n) and "Sequential" in ast.unparse(n),
    "class-getattr": _defines("__getattr__"),
    "class-setattr": _defines("__setattr__"),
    "class-slots": lambda n: isinstance(n, ast.Assign) and ast.unparse(n.targets[0]) == "__slots__",
    "class-descriptor": _defines("__get__"),
    "class-builtin-subclass": lambda n: isinstance(n, ast.ClassDef) and any(
        ast.unparse(b) in ("tuple", "list", "dict") for b in n.bases),
    "nn-module": _class_with_base("torch.nn.Module"),
    "nn-hook": lambda n: _is_call("register_forward_hook")(n) or _is_call("register_forward_pre_hook")(n),
    "nn-train-eval": _is_call(".train"),
    "nn-counter": lambda n: isinstance(n, ast.Assign) and ast.unparse(n.targets[0]) == "self.steps",
    "nn-iterate": lambda n: isinstance(n, ast.For) and any(
        w in ast.unparse(n.iter) for w in ("parameters", "children", "modules", "buffers")),
    "nn-functional": lambda n: isinstance(n, ast.Call) and ast.unparse(n.func).startswith("F."),
    "autograd-ctx": lambda n: _defines("backward")(n) or _defines("setup_context")(n),
    "func-vmap": _is_call("torch.func.vmap"),
    "func-grad": lambda n: isinstance(n, ast.Call) and ast.unparse(n.func).startswith(
        ("torch.func.grad", "torch.func.jac", "torch.func.vjp", "torch.func.jvp", "torch.func.hessian")),
    "func-functional-call": _is_call("torch.func.functional_call"),
    "checkpoint": _is_call("torch.utils.checkpoint.checkpoint"),
    "compiler-disable": lambda n: "disable" in ast.unparse(n) and isinstance(n, (ast.FunctionDef, ast.Assign)),
    "opaque-helper": lambda n: isinstance(n, (ast.FunctionDef, ast.Assign)) and any(
        w in ast.unparse(n) for w in ("allow_in_graph", "nonstrict_trace")),
    "assume-constant": _decorated("assume_constant_result"),
    "torch-function-subclass": lambda n: _class_with_base("torch.Tensor")(n) and any(
        _defines("__torch_function__")(s) for s in n.body),
    "torch-function-mode": _class_with_base("TorchFunctionMode"),
    "class-new": _defines("__init_subclass__"),
    "class-metaclass": lambda n: isinstance(n, ast.ClassDef) and any(k.arg == "metaclass" for k in n.keywords),
    "control-hop": lambda n: isinstance(n, ast.Call) and ast.unparse(n.func) in (
        "torch.while_loop", "scan", "associative_scan", "hop_map"),
    "nested-compile-region": _decorated("nested_compile_region"),
    "autograd-grad": lambda n: isinstance(n, ast.Call) and ast.unparse(n.func) == "torch.autograd.grad",
    "pytree-map": _is_call("tree_map"),
    "nn-export-specialized": lambda n: isinstance(n, ast.Assign) and ast.unparse(n.targets[0]).startswith("SPEC_"),
    "frame-classes": lambda n: _is_call(".__get__")(n) or _is_call("object.__new__")(n) or _is_call("_replace")(n)
    or isinstance(n, ast.Assign) and ast.unparse(n.targets[0]).endswith(".__class__"),
}


@lru_cache(maxsize=1)
def cases():
    return tuple(draw_case(case_seed(43, i), ("classes",)) for i in range(N))


def test_each_construct_has_a_share_of_the_family():
    counts = Counter(t for c in cases() for t in c.tags)
    for tag in CONSTRUCTS:
        assert counts[tag] >= 0.02 * N, (tag, counts[tag])


def test_the_source_holds_each_construct():
    for tag, holds in CONSTRUCTS.items():
        tagged = [c for c in cases() if tag in c.tags][:5]
        for case in tagged:
            assert any(holds(node) for node in ast.walk(ast.parse(case.source))), (tag, case.source)


def test_construct_programs_run_eagerly():
    ours = cases()[:120]
    bad = [c for c in ours if not intended(c, observe(c.source, c.entry, "cpu", None, "eager"))]
    assert len(bad) <= 0.01 * len(ours), bad[0].source if bad else ""


# mutant -> (its construct, cases of a seed-0 classes campaign that find it with margin; the second first shows at
# 88, the third at 48)
MUTANTS = {"super-mro-of-typevar": ("class-mro", 60), "specialized-modulelist-reversed": ("nn-export-specialized", 110),
           "tuplegetter-reads-first-field": ("frame-classes", 60)}


@pytest.mark.parametrize("mutant", sorted(MUTANTS))
def test_the_mutant_names_its_construct(mutant):
    assert load()[mutant].construct == MUTANTS[mutant][0]
    assert load()[mutant].layer == "dynamo"


@pytest.mark.slow
@pytest.mark.parametrize("mutant", sorted(MUTANTS))
def test_a_short_campaign_finds_the_mutant_and_not_without_the_construct(trial, mutant):
    """Both mutants share the trial with every construct on (as long as the longer needs); each is then
    checked against a trial of its own with its construct off."""
    construct, cases = MUTANTS[mutant]
    assert trial(sorted(MUTANTS), "classes", max(c for _, c in MUTANTS.values())).finds(mutant, construct)
    assert not trial(mutant, "classes", cases, disable=construct).finds(mutant)


def test_a_functional_loss_over_a_tensor_without_columns_is_not_drawn():
    """Seed 2323 of the default mix (a one-hour soak): nn-functional drew a cross-entropy target for a tensor
    whose last size is 0 and divided by it (ZeroDivisionError, a harness error). Drawn directly here, over a
    tensor of shape (2, 0), so the check does not hang on what one seed of the whole mix draws."""
    from dynfuzz.generators.builder import Builder
    from dynfuzz.generators.case import case_from_program
    from dynfuzz.generators.classes.nn import nn_functional
    from dynfuzz.generators.compose import finish
    from dynfuzz.generators.hypothesis_compat import data_from_seed

    for seed in range(40):
        b = Builder()
        b.add_input("x", (2, 0))
        nn_functional(data_from_seed(seed).draw, b)
        case = case_from_program(finish(b))
        assert "cross_entropy" not in case.source
        assert intended(case, observe(case.source, case.entry, "cpu", None, "eager")), case.source
