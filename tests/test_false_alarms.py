"""False alarms: deliberate refusals are skipped with their reason, and a correct compiler reports nothing.

See Note [Deliberate refusals are not findings] in oracles/exceptions.py.
"""
from __future__ import annotations

import re
import textwrap

import pytest
import torch
from dynfuzz.generators.case import draw_case
from dynfuzz.oracles.exceptions import deliberate_refusal
from dynfuzz.oracles.model import ExcInfo
from dynfuzz.run.compilers import CompileSpec, make_compiler
from dynfuzz.run.judge import judge

INPUTS = """
        def inputs(device, call=0):
            return (torch.linspace(-1, 1, 4, device=device), torch.zeros(1, device=device))
"""
DELIBERATE = {  # construct -> (program body, fullgraph it is refused under)
    "graph_break() under fullgraph": ("""
        import torch
        def f(x, y):
            y = x + 1
            torch._dynamo.graph_break()
            return y * 2
    """, True),
    "print() under fullgraph": ("""
        import torch
        def f(x, y):
            print("value", 1)
            return x + 1
    """, True),
    "out= op resizing its target under fullgraph": ("""
        import torch
        def f(x, y):
            torch.sigmoid(x, out=y)
            return y + 1
    """, True),
    "an in-place view op (t_, transpose_...) on a graph input under fullgraph": ("""
        import torch
        def f(x, y):
            y.t_()
            return x + 1
    """, True),
    "an nn.Parameter constructed in the frame under fullgraph": ("""
        import torch
        def f(x, y):
            lin = torch.nn.Linear(4, 4)
            return x + lin.weight.shape[0]
    """, True),
    "a torch.compiler.disable'd function under fullgraph": ("""
        import torch
        class Skipper:
            @torch.compiler.disable
            def run(self, t):
                return t * 2
        def f(x, y):
            return Skipper().run(x) + 1
    """, True),
    "Tensor.backward() without trace_autograd_ops under fullgraph": ("""
        import torch
        def f(x, y):
            w = x.detach().clone().requires_grad_()
            (w * 2).sum().backward()
            return w.grad + y.sum()
    """, True),
    "torch.autograd.grad without trace_autograd_ops under fullgraph": ("""
        import torch
        def f(x, y):
            w = x.detach().clone().requires_grad_()
            (g,) = torch.autograd.grad((w * 2).sum(), [w])
            return g + y.sum()
    """, True),
    "a logger call under fullgraph": ("""
        import torch
        import logging
        LOG = logging.getLogger("dynfuzz.program")
        def f(x, y):
            LOG.debug("value %s", 1)
            return x + 1
    """, True),
    "torch.is_inference_mode_enabled() under fullgraph (a documented fundamental graph break)": ("""
        import torch
        def f(x, y):
            with torch.inference_mode():
                k = int(torch.is_inference_mode_enabled())
            return x + k
    """, True),
    "an assert that fails while tracing under fullgraph (a documented fundamental graph break)": ("""
        import torch
        def f(x, y):
            try:
                assert x.dim() == 7, "rank"
                k = 0
            except AssertionError as err:
                k = len(str(err))
            return x + k
    """, True),
    "side effect or graph break inside a torch.cond branch": ("""
        import torch
        LOG = []
        def f(x, y):
            def yes(a):
                LOG.append(1)
                return a + 1
            return torch.cond(x.sum() > 0, yes, lambda a: a - 1, (x,))
    """, False),
}
# Generated cond programs run eagerly as a plain `if` (eager-mode torch.cond would run Dynamo itself).
EAGER = {"side effect or graph break inside a torch.cond branch": DELIBERATE[
    "side effect or graph break inside a torch.cond branch"][0].replace(
    "torch.cond(x.sum() > 0, yes, lambda a: a - 1, (x,))", "yes(x) if bool(x.sum() > 0) else x - 1")}


@pytest.mark.parametrize("reason", sorted(DELIBERATE))
def test_deliberate_refusal_is_skipped_with_its_reason(judge_source, reason):
    body, fullgraph = DELIBERATE[reason]
    eager = textwrap.dedent(EAGER[reason] + INPUTS) if reason in EAGER else None
    result = judge_source(body + INPUTS, fullgraph=fullgraph, eager_source=eager)
    for f in result.findings:  # an older release refuses another way, or cannot say which construct it refused
        for pattern, why in OLDER_REFUSALS.get(reason, ()):
            if any(re.search(pattern, line) for line in f.details):
                pytest.skip(f"torch {torch.__version__}: {why}")
    assert result.findings == []
    assert result.skipped == reason


# reason -> (what the refusal's details hold on an older release, why the construct's refusal cannot be shown there)
OLDER_REFUSALS = {
    "Tensor.backward() without trace_autograd_ops under fullgraph": [
        (r"Unsupported: Tensor\.requires_grad_$", "refuses Tensor.requires_grad_() in the frame (graph break "
                                                  "'Tensor.requires_grad_') before the backward is reached")],
    "torch.autograd.grad without trace_autograd_ops under fullgraph": [
        (r"Unsupported: Tensor\.requires_grad_$", "refuses Tensor.requires_grad_() in the frame (graph break "
                                                  "'Tensor.requires_grad_') before autograd.grad is reached")],
    "an assert that fails while tracing under fullgraph (a documented fundamental graph break)": [
        (r"should_compile_partial_graph=False", "names every graph break at a jump or attribute store "
                                               "'should_compile_partial_graph=False': a failing assert cannot be "
                                               "told from any other refusal")],
    "side effect or graph break inside a torch.cond branch": [
        (r"Cond doesn't work unless it is captured completely", "UncapturedHigherOrderOpError does not say what broke "
                                                                "the branch ('Cond doesn't work unless it is captured "
                                                                "completely'), so a deliberate side effect cannot be "
                                                                "told from a refused construct")],
}


def test_graph_break_without_fullgraph_is_judged_normally(judge_source):
    result = judge_source(DELIBERATE["graph_break() under fullgraph"][0] + INPUTS, fullgraph=False)
    assert result.findings == [] and result.skipped is None


def test_constraint_violation_of_a_specialised_dynamic_dim_is_by_design():
    err = ExcInfo("ConstraintViolationError", "torch.fx.experimental.symbolic_shapes",
                  "Constraints violated (L['x'].size()[0])!")
    assert "by design" in deliberate_refusal(err, fullgraph=False)


def test_aot_compile_refusals_are_its_documented_limits_and_only_its_own():
    """aot_compile refuses a guard it cannot write into its package (a 300-case check filed 13 of them) and a
    graph break in its own words; the same errors from another way of compiling stay findings."""
    package = ExcInfo("PackageError", "torch._dynamo.exc", "DICT_VERSION guard cannot be serialized.")
    graph_break = ExcInfo("RuntimeError", "builtins", "Graph breaks are not supported with aot compile. Please use "
                          "torch.compile(fullgraph=True).")
    absent = ExcInfo("NotImplementedError", "builtins", "torch.compile(...).aot_compile is absent from this torch")
    assert deliberate_refusal(package, False, "aot") == "refused by aot_compile: a guard it cannot serialize"
    assert deliberate_refusal(graph_break, False, "aot") == "refused by aot_compile: a graph break"
    assert deliberate_refusal(absent, False, "aot") == "torch.compile(...).aot_compile is absent from this torch"
    for err in (package, graph_break, absent):
        assert deliberate_refusal(err, True, "dynamo") is None and deliberate_refusal(err, True) is None


def test_a_release_without_graph_break_types_is_matched_by_its_message():
    """torch 2.5.1 raises `Unsupported: Tensor.item` with no gb_type: a fullgraph .item() refusal there was
    filed as a bug (13 findings of a 30-minute campaign), once its minimizer dropped capture_scalar_outputs."""
    old = ExcInfo("Unsupported", "torch._dynamo.exc", "Tensor.item")
    assert deliberate_refusal(old, fullgraph=True) == "Tensor.item() without capture_scalar_outputs under fullgraph"
    assert deliberate_refusal(old, fullgraph=False) is None
    other = ExcInfo("Unsupported", "torch._dynamo.exc", "Tensor.item of a tensor subclass")
    assert deliberate_refusal(other, fullgraph=True) is None


@pytest.mark.parametrize("message, reason", [
    ("'skip function graph_break in file /venv/lib/python3.11/site-packages/torch/_dynamo/decorators.py'",
     "graph_break() under fullgraph"),
    ("call torch._dynamo.disable() wrapped function <function skipped0 at 0x7faa78757880>",
     "a torch.compiler.disable'd function under fullgraph"),
    ("out variants with resizing on graph inputs", "out= op resizing its target under fullgraph"),
    ("builtin: print [<class 'torch._dynamo.variables.constant.ConstantVariable'>] False", "print() under fullgraph")])
def test_torch_251_refusal_messages_are_deliberate(message, reason):
    """The deliberate fullgraph refusals a 30-minute torch 2.5.1 campaign filed as bugs (untyped there), and its
    print(). (Its in-place-view and cond messages name no construct, so they stay findings there.)"""
    assert deliberate_refusal(ExcInfo("Unsupported", "torch._dynamo.exc", message), fullgraph=True) == reason
    assert deliberate_refusal(ExcInfo("Unsupported", "torch._dynamo.exc", message), fullgraph=False) is None
    assert deliberate_refusal(ExcInfo("Unsupported", "torch._dynamo.exc", "skip function graph_breaker_x"),
                              fullgraph=True) is None


def test_refusals_that_name_other_constructs_are_not_deliberate():
    data_dep = ExcInfo("Unsupported", "torch._dynamo.exc", "x", gb_type="Failed to trace builtin operator",
                       detail="Dynamo does not know how to trace builtin operator `sorted`")
    assert deliberate_refusal(data_dep, fullgraph=True) is None  # only `print` is a deliberate builtin
    internal = ExcInfo("InternalTorchDynamoError", "torch._dynamo.exc", "AttributeError: boom")
    assert deliberate_refusal(internal, fullgraph=True) is None
    graph_break = ExcInfo("Unsupported", "torch._dynamo.exc", "x", gb_type="Call to `torch._dynamo.graph_break()`")
    assert deliberate_refusal(graph_break, fullgraph=False) is None


@pytest.mark.parametrize("fullgraph", [False, True])
def test_identity_compiler_reports_nothing_on_generated_programs(fullgraph):
    """A perfect compiler: every finding against it would be a false alarm (20 generated cases per mode)."""
    spec = CompileSpec(compiler="identity", fullgraph=fullgraph)
    compiler = make_compiler(spec)
    for seed in range(20):
        case = draw_case(seed)
        found = [f for f in judge(case, compiler, spec).findings if f.kind != "reference-bug"]
        assert found == [], (seed, case.source, found)


def test_campaign_summary_counts_skipped_cases_by_reason(tmp_path):
    from dynfuzz.campaign.campaign import CampaignConfig
    from dynfuzz.campaign.ledger import Ledger
    from dynfuzz.run.judge import CaseResult

    ledger = Ledger(CampaignConfig(budget=60, out=tmp_path))  # a constructor that fails is a failure, never a skip
    case = draw_case(0)
    result = CaseResult([], case.tags, True)
    result.skipped = "print() under fullgraph"
    ledger._finish(case, "done", result)
    assert ledger.skipped == {"print() under fullgraph": 1}
    assert ledger.summary()["skipped"] == {"print() under fullgraph": 1}


def test_a_dynamo_setting_this_torch_lacks_skips_the_case(judge_source):
    """torch 2.5.1 has no `nested_graph_breaks` or `recompile_limit`: patching them raised KeyError in the compiled
    run only, and a 30-minute campaign there filed 6 buckets (137 findings) of it as torch bugs."""
    result = judge_source("""
        import torch
        def f(x):
            return x + 1
        def inputs(device, call=0):
            return (torch.ones(2, device=device),)
    """, dynamo_config_items=(("no_such_dynamo_setting", True),))
    assert result.findings == []
    assert result.skipped == "Dynamo setting no_such_dynamo_setting absent from this torch"
    assert judge_source(textwrap.dedent("""
        import torch
        def f(x):
            return x + 1
        def inputs(device, call=0):
            return (torch.ones(2, device=device),)
    """), dynamo_config_items=(("capture_scalar_outputs", False),)).skipped is None


def test_a_forced_graph_break_inside_a_cond_branch_is_by_design():
    """Under `debug_force_graph_break_on_leaf_return` (a Dynamo setting dynfuzz draws), a branch's leaf
    function return breaks the graph, and torch.cond refuses any graph break in a branch: every 1,000-case
    bench run filed this as a crash."""
    err = ExcInfo("UncapturedHigherOrderOpError", "torch._dynamo.exc",
                  "This higher order operator doesn't work unless it is captured completely with torch.compile. "
                  "Got graph break/error:\n\nForced graph break on leaf function\n  Higher Order Operator: torch.cond")
    assert deliberate_refusal(err, fullgraph=False) == "side effect or graph break inside a torch.cond branch"


@pytest.mark.parametrize("err, reason", [
    (ExcInfo("UserError", "torch._dynamo.exc", "It looks like one of the outputs with type `<class 'function'>` is "
             "not supported or pytree-flattenable. "), "a non-pytree input or output"),
    (ExcInfo("UserError", "torch._dynamo.exc", "Cannot export model which references tensors that are neither "
             "buffers/parameters/constants nor are direct inputs."),
     "a tensor that is neither an input nor a parameter, buffer or constant"),
    (ExcInfo("UserError", "torch._dynamo.exc", "Consider annotating your code using torch._check*(). Could not "
             "guard on data-dependent expression u0 > 2 (unhinted: u0 > 2).  (Size-like symbols: u0)"),
     "data-dependent control flow"),
    (ExcInfo("Unsupported", "torch._dynamo.exc", "rewrite_signature: cannot trace optional function input",
             gb_type="rewrite_signature: cannot trace optional function input"),
     "an optional parameter"),
    (ExcInfo("Unsupported", "torch._dynamo.exc", "Attempted to use `torch.nn.Parameter()` with export",
             gb_type="Attempted to use `torch.nn.Parameter()` with export"),
     "an nn.Parameter constructed in the frame"),
    (ExcInfo("Unsupported", "torch._dynamo.exc", "HOP: Unsafe side effect", gb_type="HOP: Unsafe side effect"),
     "a side effect inside a torch.cond branch"),
    (ExcInfo("Unsupported", "torch._dynamo.exc", "Call to `torch._dynamo.graph_break()`",
             gb_type="Call to `torch._dynamo.graph_break()`"), "graph_break() under fullgraph"),
])
def test_each_refusal_export_documents_is_deliberate(err, reason):
    assert deliberate_refusal(err, False, "strict") == f"refused by export (strict): {reason}"


@pytest.mark.parametrize("err", [
    ExcInfo("Unsupported", "torch._dynamo.exc", "Unsupported method call", gb_type="Unsupported method call"),
    ExcInfo("Unsupported", "torch._dynamo.exc", "Unsupported Tensor.resize_() call",
            gb_type="Unsupported Tensor.resize_() call"),
    ExcInfo("UserError", "torch._dynamo.exc", "some other user error"),
])
def test_a_refusal_export_does_not_document_is_not_deliberate(err):
    assert deliberate_refusal(err, False, "dynamo") is None


def test_compiled_autograds_create_graph_refusal_is_its_documented_limit():
    """Compiled autograd refuses `create_graph=True` in its own words (a 2.5.1 run filed it as a crash bucket);
    another RuntimeError from the same backward stays a finding."""
    limit = ExcInfo("RuntimeError", "builtins", "compiled_autograd does not support create_graph")
    other = ExcInfo("RuntimeError", "builtins", "one of the variables needed for gradient computation has been "
                    "modified by an inplace operation")
    assert "compiled autograd" in deliberate_refusal(limit, fullgraph=False)
    assert deliberate_refusal(other, fullgraph=False) is None and deliberate_refusal(other, fullgraph=True) is None
