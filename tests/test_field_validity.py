"""A campaign on an older torch (the field: 2.5.1) judges only programs that release can run, and no case leaves
state behind for the next one. Each leak here was found on torch 2.5.1; the tests marked so fail there
without their fix (`tox -e torch251`), the others on any release."""
from __future__ import annotations

import textwrap

import pytest
import torch
from dynfuzz.run.api_presence import absent_in_error, absent_in_source, absent_reason
from dynfuzz.run.compilers import CompileSpec, make_compiler
from dynfuzz.run.execute import observe

RELEASE = tuple(int(p) for p in torch.__version__.split("+")[0].split(".")[:2])

STRICT_EXPORT = textwrap.dedent("""
    import torch
    W = torch.ones(3)
    def helper(t):
        return t * W
    def f(x):
        return helper(x) + W
    def inputs(device, call=0):
        return (torch.linspace(-1, 1, 3, device=device),)
    COMPILE_OPTIONS = {"export": "strict"}
""")

# Found by a 1,000-case torch 2.5.1 run: strict export fails inside torch.func.grad, which never exits.
EXPORTED_GRAD = textwrap.dedent("""
    import torch
    def f(x):
        return torch.func.grad(lambda u: (torch.sin(u) * u).sum())(torch.tanh(x).flatten()[:2])
    def inputs(device, call=0):
        return (torch.linspace(-1.0, 1.0, 2, device=device),)
    CALLS = 1
    COMPILE_OPTIONS = {"export": "strict"}
""")

USES_SAVED_TENSOR_HOOKS = textwrap.dedent("""
    import torch
    def f(x):
        with torch.autograd.graph.saved_tensors_hooks(lambda t: t * 1, lambda t: t):
            return (x * x).sum()
    def inputs(device, call=0):
        return (torch.linspace(-1, 1, 4, device=device).requires_grad_(),)
""")


def _compiled(source: str):
    return observe(source, "f", "cpu", make_compiler(CompileSpec()), "compiled")


def test_each_program_is_exported_through_a_helper_of_its_own():
    """The helper's globals are where strict export's root frame lives: shared by two programs, the first
    one's module alias is still there when the second is traced."""
    from dynfuzz.run.export_runner import exported

    first, second = exported(lambda x: x, "strict"), exported(lambda x: x, "strict")
    assert first.__globals__ is not second.__globals__


def test_strict_export_leaves_no_module_alias_for_the_next_program():
    """torch 2.5.1: the second strict export of a program (a new module under the same name) failed Dynamo's
    assertion in `import_source` on the alias the first one left: 3 buckets, 19 findings of a 20-minute run."""
    errors = []
    for _ in range(3):
        obs = _compiled(STRICT_EXPORT)
        errors.append([(c.error.type, c.error.torch_frame) if c.error else None for c in obs.calls])
    assert errors[1] == errors[2] == errors[0]
    assert not any(e and str(e[1]).endswith("import_source") for run in errors for e in run)


def test_saved_tensor_hooks_a_case_left_disabled_are_enabled_again():
    leaky = textwrap.dedent("""
        import torch
        def f(x):
            torch._C._autograd._saved_tensors_hooks_disable("left disabled by the previous case")
            return x + 1
        def inputs(device, call=0):
            return (torch.linspace(-1, 1, 4, device=device),)
    """)
    obs = observe(leaky, "f", "cpu", None, "eager")
    assert obs.extra["leaked_saved_tensors_hooks_state"] is True
    assert torch._C._autograd._saved_tensors_hooks_get_disabled_error_message() is None
    assert observe(USES_SAVED_TENSOR_HOOKS, "f", "cpu", None, "eager").calls[0].error is None


def test_an_export_raising_inside_torch_func_grad_leaves_no_level_and_no_disabled_hooks():
    """torch 2.5.1: the exported grad raised inside its transform; its level stayed on functorch's stack (and
    undoing it through torch's helper failed functorch's internal assert `!dynamicLayerStack.empty()`), and
    saved-tensor hooks stayed disabled with grad's message, which every later program using them then raised
    ("torch.func.{grad, vjp, jacrev, hessian} don't yet support saved tensor hooks")."""
    depth = torch._C._functorch.get_dynamic_layer_stack_depth()
    _compiled(EXPORTED_GRAD)
    assert torch._C._functorch.get_dynamic_layer_stack_depth() == depth
    assert torch._C._autograd._saved_tensors_hooks_get_disabled_error_message() is None
    assert observe(USES_SAVED_TENSOR_HOOKS, "f", "cpu", None, "eager").calls[0].error is None


def test_a_program_naming_a_torch_api_this_release_lacks_is_skipped(judge_source):
    result = judge_source("""
        import torch
        def f(x):
            return torch._higher_order_ops.no_such_hop(lambda t: t + 1, x)
        def inputs(device, call=0):
            return (torch.ones(2, device=device),)
    """)
    assert result.findings == []
    assert result.skipped == absent_reason("torch._higher_order_ops.no_such_hop")
    assert result.skipped.startswith("API torch._higher_order_ops.no_such_hop absent from torch 2.")


def test_what_counts_as_an_absent_api():
    assert absent_in_source("import torch\ny = torch.sin(torch.ones(1))\n") is None
    # a submodule called as the function later releases export under its name (associative_scan on 2.5)
    assert absent_in_source("import torch\nimport torch.nn.functional\ny = torch.nn.functional(1)\n") \
        == "torch.nn.functional"
    assert absent_in_source("import torch\nfrom torch.no_such_module import x\n") == "torch.no_such_module"
    assert absent_in_source("import torch\ny = torch.ops.aten.no_such_op_xyz\n") == "torch.ops.aten.no_such_op_xyz"
    assert absent_in_error("AttributeError", "'Tensor' object has no attribute 'no_such_method'") \
        == "Tensor.no_such_method"
    assert absent_in_error("AttributeError", "'Tensor' object has no attribute 'sin'") is None  # it has
    assert absent_in_error("AttributeError", "'Box' object has no attribute 'k'") is None  # the program's own
    assert absent_in_error("ValueError", "module 'torch' has no attribute 'x'") is None


def test_a_tensor_method_eager_lacks_skips_the_case(judge_source):
    result = judge_source("""
        import torch
        def f(x):
            return x.no_such_method_in_any_release()
        def inputs(device, call=0):
            return (torch.ones(2, device=device),)
    """)
    assert (result.findings, result.skipped) == ([], absent_reason("Tensor.no_such_method_in_any_release"))


@pytest.mark.skipif(RELEASE < (2, 13), reason="the programs are written against torch 2.13's API")
def test_no_default_mix_program_is_skipped_on_the_release_it_is_written_for():
    from dynfuzz.generators.case import case_seed, draw_case

    absent = {}
    for i in range(150):
        case = draw_case(case_seed(0, i))
        api = absent_in_source(case.source) or (case.eager_source and absent_in_source(case.eager_source))
        if api:
            absent[i] = api
    assert absent == {}


# The frame's captured cell rebound, then a pre-existing getter of a same-named cell holding the same object
# reads its own: torch 2.5.1 reads the frame's (pytorch#140436). It shows only while `f` is the root frame.
SHADOW_ROOT_CELL = textwrap.dedent("""
    import torch
    SHADOW = torch.tensor(0.5)
    def make_sh():
        k = SHADOW
        def get(t):
            return torch.tanh(t + k.mean())
        return get
    GET = make_sh()
    def make_f():
        k = SHADOW
        def f(x):
            nonlocal k
            k = torch.tanh(k + 0.5)
            return GET(x)
        return f
    f = make_f()
    def inputs(device, call=0):
        return (torch.linspace(-1, 1, 4, device=device),)
""")


def _repro(source: str):
    from dynfuzz.generators.case import Case
    from dynfuzz.run.judge import judge
    from dynfuzz.triage.repro import metadata_for, render_repro

    case, spec = Case(source=source), CompileSpec()
    result = judge(case, make_compiler(spec), spec)
    if not result.findings:
        return None
    finding = result.findings[0]
    return render_repro(case, finding, spec, metadata_for(case, finding, spec))


def test_a_repro_runs_the_program_with_its_source_known_as_the_workers_do(tmp_path):
    """torch 2.5 compiles a function whose source file it cannot find through a wrapper frame: the script's
    entry (exec'd from a string) was then inlined, where the workers' entry (source registered under a file
    name) was the root frame, and a bug of root-frame cells did not reproduce in its own repro ("flaky")."""
    import inspect
    import runpy

    text = _repro(textwrap.dedent("""
        import torch
        def f(x):
            if not torch.compiler.is_compiling():
                raise ValueError("eager only")
            return x + 1
        def inputs(device, call=0):
            return (torch.ones(2, device=device),)
    """))
    from dynfuzz.triage.repro_meta import script_of

    script = script_of(text)
    assert "exec(" not in script and "linecache" not in script  # the program is plain code in a file on disk
    path = tmp_path / "repro.py"
    path.write_text(script)
    ns = runpy.run_path(str(path), run_name="not_main")  # the program alone, as a module of that file
    assert inspect.getsourcefile(ns["f"]) == str(path)


def test_a_root_frame_cell_bug_reproduces_in_its_repro(tmp_path):
    import subprocess
    import sys

    text = _repro(SHADOW_ROOT_CELL)
    if text is None:
        pytest.skip(f"torch {torch.__version__} reads each cell right (fixed by pytorch#140436)")
    path = tmp_path / "repro.py"
    path.write_text(text)
    assert subprocess.run([sys.executable, str(path)], capture_output=True, timeout=300).returncode == 1
