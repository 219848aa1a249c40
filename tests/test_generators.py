"""The basic family and the composer: valid, deterministic, readable programs."""
import ast

from dynfuzz.generators import case_seed, draw_case, programs, redraw
from dynfuzz.generators.render import render
from dynfuzz.run.execute import observe
from hypothesis import HealthCheck, find, settings
from hypothesis import strategies as st


def test_same_seed_same_program_bytes():
    assert draw_case(123).source == draw_case(123).source
    assert draw_case(123).source != draw_case(124).source


def test_redraw_from_choices_reproduces_the_case():
    case = draw_case(77)
    assert redraw(case.choices).source == case.source


def test_programs_follow_the_convention_and_parse():
    for i in range(30):
        case = draw_case(case_seed(1, i), ("basic",))
        tree = ast.parse(case.source)
        names = {n.name for n in tree.body if isinstance(n, ast.FunctionDef)}
        assert {"f", "inputs"} <= names
        assert case.tags


def test_basic_programs_run_eagerly_without_errors():
    for i in range(40):
        case = draw_case(case_seed(2, i), ("basic",))
        obs = observe(case.source, case.entry, "cpu", None, "eager")
        assert obs.setup_error is None and all(c.error is None for c in obs.calls), case.source


def test_outputs_stay_finite():
    import torch

    for i in range(40):
        case = draw_case(case_seed(5, i), ("basic",))
        obs = observe(case.source, case.entry, "cpu", None, "eager", keep_live=True)
        out = obs.calls[0].outputs
        for t in out if isinstance(out, tuple) else (out,):
            if isinstance(t, torch.Tensor):
                assert torch.isfinite(t).all(), case.source


def test_a_failure_depending_on_one_construct_shrinks_small():
    def has_nonlocal(program):
        return "nonlocal" in render(program)

    smallest = find(programs(("basic",)), has_nonlocal,
                    settings=settings(database=None, max_examples=500, derandomize=True,
                                      suppress_health_check=list(HealthCheck)))
    lines = [line for line in render(smallest).splitlines() if line.strip()]
    assert len(lines) <= 15, "\n".join(lines)


def test_render_is_pep8_spaced():
    text = draw_case(9).source
    assert "\n\n\ndef inputs(device, call=0):" in text
    assert st  # strategies module is importable alongside
