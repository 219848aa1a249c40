"""The resizes family, the recompiles oracle and the resize doubles (issue 4)."""
from __future__ import annotations

import warnings
from collections import Counter

import pytest
import torch
from dynfuzz.generators import case_seed, draw_case
from dynfuzz.oracles.model import CallRecord, Observation, Observations
from dynfuzz.oracles.recompiles import recompiles
from dynfuzz.oracles.snapshot import take
from dynfuzz.run.execute import observe

from tests.conftest import run_source

FAMILY = ("resizes",)
REQUIRED_TAGS = (
    "out-same", "out-resize", "out-empty", "out-noncontig",
    "resize_", "resize_as_", "t_", "transpose_", "swapdims_", "squeeze_", "unsqueeze_", "as_strided_", "set_",
    "add_", "mul_", "copy_", "zero_", "fill_", "index-assign",
    "target-input", "target-intermediate", "target-view", "target-aliased", "target-cell", "target-list",
    "target-dict", "target-attr", "target-global",
    "read-shape", "read-size", "read-stride", "read-dim", "read-len", "read-contiguous", "read-iter",
    "plan-fresh", "plan-mutated-layout",
)


def kinds(result) -> set[tuple[str, str]]:
    return {(f.oracle, f.kind) for f in result.findings}


# ---- the generator -------------------------------------------------------------------


def test_every_construct_and_target_is_drawn():
    tags: Counter[str] = Counter()
    for i in range(200):
        tags.update(draw_case(case_seed(11, i), FAMILY).tags)
    missing = [t for t in REQUIRED_TAGS if tags[t] < 3]
    assert not missing, f"rarely drawn: {missing} ({dict(tags)})"


def test_drawing_is_deterministic():
    assert draw_case(case_seed(5, 3), FAMILY).source == draw_case(case_seed(5, 3), FAMILY).source


def test_generated_programs_run_cleanly_in_eager():
    bad = []
    for i in range(60):
        case = draw_case(case_seed(23, i), FAMILY)
        obs = observe(case.source, case.entry, "cpu", None, "eager")
        errors = [c.error for c in obs.calls if c.error] + ([obs.setup_error] if obs.setup_error else [])
        if errors:
            bad.append((case.seed, errors[0].type, errors[0].message))
    assert not bad, bad


def test_post_mutation_layout_plan_feeds_the_mutated_layout_on_call_one():
    case = next(c for c in (draw_case(case_seed(3, i), FAMILY) for i in range(300))
                if "plan-mutated-layout" in c.tags)
    assert "if call == 1:" in case.source and "CALLS = 3" in case.source
    obs = observe(case.source, case.entry, "cpu", None, "eager")
    assert all(c.error is None for c in obs.calls)


# ---- doubles: each caught by the right oracle with the right kind ----------------------

LOST_RESIZE = """
import torch

def f(x):
    x.resize_(2, 2)
    return x.sum()

def inputs(device, call=0):
    return (torch.linspace(-1.0, 1.0, 12, device=device).reshape(3, 4),)
"""

STALE_READ = """
import torch

def f(x):
    x.t_()
    return x.shape[0], len(x), x.stride(0)

def inputs(device, call=0):
    return (torch.linspace(-1.0, 1.0, 12, device=device).reshape(3, 4),)
"""

CELL_WRITE = """
import torch

def make_h():
    c = torch.zeros(3)
    def h(t):
        c.add_(t)
        return t * 2
    return h

H = make_h()

def f(x):
    return H(x) + 1

def inputs(device, call=0):
    return (torch.linspace(-1.0, 1.0, 3, device=device),)
"""

SIGMOID_OUT_CELL = """
import torch

def make_f():
    y = torch.zeros(2, 2)
    def f(x):
        torch.sigmoid(x, out=y)
        return y * y.shape[0], y.dim()
    return f

f = make_f()

def inputs(device, call=0):
    return (torch.linspace(-1.0, 1.0, 5, device=device),)
"""

T_THEN_RECALL = """
import torch

def f(x, y):
    x.t_()
    return x + y, x.stride(), x.is_contiguous()

def inputs(device, call=0):
    x = torch.linspace(-1.0, 1.0, 12, device=device).reshape(3, 4)
    if call == 1:
        x = torch.linspace(-1.0, 1.0, 12, device=device).reshape(4, 3).t()
    return (x, torch.ones(4, 3, device=device))

CALLS = 3
"""


def test_lost_resize_is_an_effect_lost():
    result = run_source(LOST_RESIZE, compiler="lose-resize")
    assert ("effects", "effect-lost") in kinds(result)


def test_stale_shape_read_is_an_output_miscompile():
    result = run_source(STALE_READ, compiler="stale-shape")
    assert ("outputs", "miscompile") in kinds(result)
    assert not any(f.oracle == "effects" for f in result.findings), "the stand-ins' layout must reach the caller"


def test_lost_cell_tensor_write_is_an_effect_lost():
    result = run_source(CELL_WRITE, compiler="drop-cell-data")
    found = [f for f in result.findings if f.oracle == "effects"]
    assert [f.kind for f in found] == ["effect-lost"]
    assert "cell_contents" in found[0].message


def test_recompiling_every_call_is_a_low_severity_over_guard_only():
    result = run_source(LOST_RESIZE, compiler="recompile-always")
    assert [(f.oracle, f.kind, f.severity) for f in result.findings] == [("recompiles", "over-guard", "low")]


@pytest.mark.parametrize("source", [SIGMOID_OUT_CELL, T_THEN_RECALL, LOST_RESIZE, STALE_READ, CELL_WRITE])
def test_identity_is_silent_on_correct_resize_programs(source):
    assert run_source(source, compiler="identity").findings == []


@pytest.mark.slow
@pytest.mark.parametrize("source", [SIGMOID_OUT_CELL, T_THEN_RECALL, LOST_RESIZE])
def test_torch_compile_is_silent_on_correct_resize_programs(source):
    result = run_source(source)
    assert result.eager_ok and result.findings == []


def test_nonempty_out_resize_warning_is_not_a_finding():
    with pytest.warns(UserWarning, match="was resized"):
        torch.sigmoid(torch.ones(5), out=torch.zeros(2, 2))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a warning escaping the harness would now fail the run
        result = run_source(SIGMOID_OUT_CELL, compiler="identity")
    assert result.eager_ok and result.findings == []


# ---- the recompiles oracle on its own ----------------------------------------------------


def _record(i: int, frames: int, x: torch.Tensor, state=None) -> CallRecord:
    before = take({"args": (x,), "state": state or {}})
    return CallRecord(i, None, before, before, frames=frames)


def _obs(*calls: CallRecord) -> Observations:
    return Observations(Observation("eager"), Observation("compiled", calls=list(calls)))


def test_recompile_on_identical_recall_is_flagged():
    x = torch.ones(3)
    found = recompiles(None, _obs(_record(0, 1, x), _record(1, 2, x.clone())))
    assert [(f.kind, f.severity, f.call) for f in found] == [("over-guard", "low", 1)]


@pytest.mark.parametrize("other", [torch.ones(4), torch.ones(3).t().contiguous()[:2], torch.ones(6)[::2],
                                   torch.ones(3) * 2])
def test_recompile_after_metadata_or_value_change_is_allowed(other):
    assert recompiles(None, _obs(_record(0, 1, torch.ones(3)), _record(1, 2, other))) == []


def test_recompile_after_global_float_change_is_allowed():
    x = torch.ones(3)
    calls = (_record(0, 1, x, {"SCALE": 1.0}), _record(1, 2, x.clone(), {"SCALE": 1.0 + 1e-9}))
    assert recompiles(None, _obs(*calls)) == []


def test_compare_back_to_an_older_call():
    x = torch.ones(3)
    calls = (_record(0, 1, x), _record(1, 2, torch.ones(4)), _record(2, 3, x.clone()))
    assert [f.call for f in recompiles(None, _obs(*calls))] == [2]


@pytest.mark.slow
def test_torch_automatic_dynamic_recompile_is_not_over_guard():
    source = """
import torch

def f(x):
    return x * x.shape[0]

def inputs(device, call=0):
    return (torch.ones(3 + call, device=device),)

CALLS = 3
"""
    result = run_source(source)
    assert result.frames == 2 and result.findings == []


def test_identity_is_silent_on_generated_programs():
    from dynfuzz.run.compilers import CompileSpec, make_compiler
    from dynfuzz.run.judge import judge

    spec = CompileSpec(compiler="identity")
    compiler = make_compiler(spec)
    for i in range(40):
        case = draw_case(case_seed(29, i), FAMILY)
        result = judge(case, compiler, spec)
        assert result.findings == [], (case.seed, [f.title for f in result.findings])


def _square():
    return torch.arange(9.0).reshape(3, 3)


@pytest.mark.parametrize("mutate, aspect", [
    (lambda x, y: x.resize_(9), "shape"),
    (lambda x, y: x.t_(), "stride"),
    (lambda x, y: x.set_(x.untyped_storage(), 1, (2, 3), (3, 1)), "offset"),
    (lambda x, y: x.set_(x.untyped_storage(), 0, (3, 3), (1, 3)), "contiguous"),
    (lambda x, y: x.mul_(1.0), "mutated"),
    (lambda x, y: x.set_(y), "storage"),
])
def test_snapshot_tells_each_metadata_aspect_apart(mutate, aspect):
    from dynfuzz.oracles.snapshot import diff

    def state(apply: bool):
        x, y = _square(), _square()
        if apply:
            mutate(x, y)
        return take({"args": (x, y)})

    assert aspect in {a for _, a, _, _ in diff(state(False), state(True))}


# ---- generator validity bugs, each by its seed ----------------------------------------------------


def test_an_aliased_argument_is_built_from_the_input_as_passed_in():
    """Seed 3000434 (`sample -n 1000 --seed 3 --family resizes`): an `out=` op had resized `x` to 2-D in the
    body, and a later aliased argument was then built as `x.t()` in `inputs()`, where `x` is still 3-D."""
    case = draw_case(case_seed(3, 425), FAMILY)
    assert case.seed == 3000434
    obs = observe(case.source, case.entry, "cpu", None, "eager")
    assert obs.setup_error is None and not [c.error for c in obs.calls if c.error]


def test_no_program_reads_memory_a_resize_left_uninitialised():
    """With `fill_uninitialized_memory`, every byte a resize adds is NaN: a program that reads one (a view
    resized past its storage, an alias copied from after its resize) would return NaN."""
    from torch.utils import deterministic

    prev = torch.are_deterministic_algorithms_enabled(), deterministic.fill_uninitialized_memory
    torch.use_deterministic_algorithms(True)
    deterministic.fill_uninitialized_memory = True
    bad = []
    try:
        for i in range(150):
            case = draw_case(case_seed(31, i), FAMILY)
            if "resize_" not in case.tags and "resize_as_" not in case.tags and "out-resize" not in case.tags:
                continue
            obs = observe(case.source, case.entry, "cpu", None, "eager", keep_live=True)
            for call in obs.calls:
                live = (call.outputs, call.args)
                if call.error is None and any(t.isnan().any() for t in _tensors(live) if t.is_floating_point()):
                    bad.append(case.seed)
                    break
    finally:
        torch.use_deterministic_algorithms(prev[0])
        deterministic.fill_uninitialized_memory = prev[1]
    assert not bad, bad


def _tensors(value):
    if isinstance(value, torch.Tensor):
        yield value
    elif isinstance(value, (list, tuple)):
        for v in value:
            yield from _tensors(v)
    elif isinstance(value, dict):
        for v in value.values():
            yield from _tensors(v)
    elif hasattr(value, "__dict__") and not isinstance(value, type):
        yield from _tensors(vars(value))


def test_out_ops_never_take_an_operand_that_requires_grad():
    """Seeds 79 and 193 of the default mix (`sample -n 2000 --seed 0`): a cond result that requires grad
    (its operand was a grad leaf) became an `out=` operand, which torch refuses."""
    checked = 0
    for i in range(400):
        case = draw_case(case_seed(37, i), ("conds", "resizes"))
        if "requires-grad" not in case.tags or not {"out-variant", "out-alias"} & case.tags:
            continue
        checked += 1
        obs = observe(case.eager_source or case.source, case.entry, "cpu", None, "eager")
        assert obs.setup_error is None and not [c.error for c in obs.calls if c.error], case.seed
    assert checked >= 5
