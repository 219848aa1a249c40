"""Each foundation oracle catches its broken-compiler double and is silent on correct compilers."""
import pytest
from dynfuzz.oracles.exceptions import category, user_type
from dynfuzz.oracles.model import ExcInfo, normalise, signature

GOOD_PROGRAMS = {
    "closure-nonlocal": """
        import torch
        def f(x):
            acc = 0
            def bump(t):
                nonlocal acc
                acc = acc + 1
                return t.sin() * 2
            y = bump(x)
            return y + bump(y), acc
        def inputs(device, call=0):
            return (torch.linspace(-1, 1, 6, device=device).reshape(2, 3),)
    """,
    "global-list": """
        import torch
        HIST = []
        COUNT = 0
        def f(x):
            global COUNT
            COUNT += 1
            HIST.append(x.cos())
            return x.t() @ x
        def inputs(device, call=0):
            return (torch.linspace(-1, 1, 6, device=device).reshape(2, 3),)
    """,
    "view-output": """
        import torch
        def f(x):
            x.mul_(2)
            return x[1:], x.sum()
        def inputs(device, call=0):
            return (torch.linspace(-1, 1, 4, device=device),)
    """,
    "raises-same": """
        import torch
        def f(x):
            return x[10]
        def inputs(device, call=0):
            return (torch.zeros(3, device=device),)
    """,
    "between-calls": """
        import torch
        SCALE = 2.0
        def f(x):
            return x * SCALE
        def between(call):
            global SCALE
            SCALE = 3.0
        def inputs(device, call=0):
            return (torch.ones(2, device=device),)
    """,
}

EFFECT_PROGRAM = GOOD_PROGRAMS["global-list"]


@pytest.mark.parametrize("name", sorted(GOOD_PROGRAMS))
@pytest.mark.parametrize("compiler", ["identity", "torch"])
def test_no_false_alarms_on_correct_programs(judge_source, name, compiler):
    result = judge_source(GOOD_PROGRAMS[name], compiler=compiler)
    assert result.findings == [], [f.title for f in result.findings]


def test_outputs_oracle_catches_perturbed_output(judge_source):
    result = judge_source(GOOD_PROGRAMS["closure-nonlocal"], compiler="perturb-output")
    assert [(f.oracle, f.kind) for f in result.findings] == [("outputs", "miscompile")]
    assert any("values" in d for d in result.findings[0].details)


def test_effects_oracle_catches_dropped_global_write(judge_source):
    result = judge_source(EFFECT_PROGRAM, compiler="drop-effect")
    kinds = {(f.oracle, f.kind) for f in result.findings}
    assert ("effects", "effect-lost") in kinds
    assert any("HIST" in d and "length" in d for f in result.findings for d in f.details)


def test_exception_oracle_classifies_internal_crash(judge_source):
    result = judge_source(GOOD_PROGRAMS["closure-nonlocal"], compiler="crash")
    assert [(f.oracle, f.kind, f.severity) for f in result.findings] == [("exceptions", "crash", "high")]


def test_unexpected_refusal_under_fullgraph_is_unsupported_not_crash(judge_source):
    """A refusal of a construct not in the deliberate list (tests/test_false_alarms.py) stays a finding."""
    source = """
        import torch
        def f(x):
            return x + torch.tensor(x.tolist())
        def inputs(device, call=0):
            return (torch.ones(2, device=device),)
    """
    refused = judge_source(source, fullgraph=True)
    assert [(f.oracle, f.kind, f.severity) for f in refused.findings] == [("exceptions", "unsupported", "info")]
    assert refused.skipped is None
    assert judge_source(source, fullgraph=False).findings == []


def test_missing_exception_is_reported():
    from dynfuzz.oracles.exceptions import exceptions
    from dynfuzz.oracles.model import CallRecord, Observation, Observations

    err = ExcInfo("ValueError", "builtins", "bad")
    eager = Observation("eager", [CallRecord(0, err, None)])
    compiled = Observation("compiled", [CallRecord(0, None, None)])
    found = exceptions(None, Observations(eager, compiled), None)
    assert [f.kind for f in found] == ["missing-exception"]


def test_wrapped_and_observed_exceptions_unwrap_to_the_user_type():
    wrapped = ExcInfo("TorchRuntimeError", "torch._dynamo.exc",
                      "Dynamo failed to run FX node with fake tensors: got TypeError('bad operand')")
    assert category(wrapped) == "wrapped" and user_type(wrapped) == "TypeError"
    observed = ExcInfo("Unsupported", "torch._dynamo.exc", "Observed exception",
                       causes=("ObservedKeyError",))
    assert user_type(observed) == "KeyError"
    raw_assert = ExcInfo("AssertionError", "builtins", "", torch_frame="torch/_dynamo/symbolic_convert.py:step")
    assert category(raw_assert) == "crash"
    assert category(ExcInfo("AssertionError", "builtins", "")) == "python"


def test_an_untyped_observed_exception_is_the_eager_failure_only_when_raised_where_eager_raised():
    """Note [An untyped observed exception raised where eager raised]: on torch 2.5.1, flex_attention's input check
    raising ValueError under fullgraph came back as `Unsupported: Observed exception` (cause: a bare
    ObservedException) and was filed as a crash; a trace that raised at a site eager never reached stays one."""
    import dataclasses

    from dynfuzz.oracles.exceptions import exceptions
    from dynfuzz.oracles.model import CallRecord, Observation, Observations
    from dynfuzz.oracles.policy import EXPORTED

    check = 'File "/torch/nn/attention/_utils.py", line 50, in _validate_sdpa_input\n    raise ValueError('
    eager = ExcInfo("ValueError", "builtins", "Expected query, key, and value to all be at least 2 dimensional",
                    traceback='Traceback (most recent call last):\n  File "<dynfuzz-7-1-eager>", line 4, in f\n'
                              f'    d = flex_attention(c, c, c)\n  {check}\nValueError: Expected ...')

    def compiled(site: str) -> ExcInfo:
        return ExcInfo("Unsupported", "torch._dynamo.exc", "Observed exception", causes=("ObservedException",),
                       detail=f'Observed exception\n\nfrom user code:\n   File "<dynfuzz-7-1-compiled>", line 4, in f'
                              f'\n    d = flex_attention(c, c, c)\n  {site}')

    def kinds(c: ExcInfo, fullgraph: bool = True, exported: bool = False) -> list[str]:
        obs = Observations(Observation("eager", [CallRecord(0, eager, None)]),
                           Observation("compiled", [CallRecord(0, c, None)]), fullgraph=fullgraph,
                           extra={EXPORTED: "strict"} if exported else {})
        return [f.kind for f in exceptions(None, obs, None)]

    assert kinds(compiled(check)) == []
    assert kinds(compiled(check.replace("line 50", "line 61"))) == ["exception-mismatch"]
    assert kinds(compiled(check), fullgraph=False) == ["exception-mismatch"]  # without fullgraph it would not stop
    assert kinds(compiled(check), fullgraph=False, exported=True) == []  # export takes the frame whole too
    typed = dataclasses.replace(compiled(check), causes=("ObservedTypeError",))
    assert kinds(typed) == ["exception-mismatch"], "a typed observed exception is judged by its type"


def test_a_refusal_before_eager_s_error_is_judged_as_a_refusal_not_a_crash():
    """On 2.5.1 `x[{...}.popitem()]` with a float x: eager raised TypeError (not subscriptable), fullgraph refused
    `dict.popitem` first, and the pair was filed as the crash bucket `crash: TypeError @dynamo`."""
    from dynfuzz.oracles.exceptions import category, exceptions
    from dynfuzz.oracles.model import CallRecord, Observation, Observations
    from dynfuzz.oracles.policy import EXPORTED

    eager = ExcInfo("TypeError", "builtins", "'float' object is not subscriptable")
    refused = ExcInfo("Unsupported", "torch._dynamo.exc", "call_method ConstDictVariable() popitem [] {}",
                      graph_break="call_method")
    crashed = ExcInfo("InternalTorchDynamoError", "torch._dynamo.exc", "TypeError: bad")
    assert category(refused) == "refusal" and category(crashed) == "crash"

    def judged(c: ExcInfo, fullgraph: bool = True) -> list[tuple[str, str]]:
        obs = Observations(Observation("eager", [CallRecord(0, eager, None)]),
                           Observation("compiled", [CallRecord(0, c, None)]), fullgraph=fullgraph)
        return [(f.kind, f.severity) for f in exceptions(None, obs, None)]

    assert judged(refused) == [("unsupported", "info")]
    assert judged(crashed) == [("exception-mismatch", "medium")]
    deliberate = ExcInfo("Unsupported", "torch._dynamo.exc", "Call to `torch._dynamo.graph_break()`",
                         gb_type="Call to `torch._dynamo.graph_break()`", graph_break="gb0025")
    assert judged(deliberate) == [], "a deliberate refusal is no finding, whatever eager raised"
    absent = ExcInfo("NotImplementedError", "builtins", "torch.compile(...).aot_compile is absent from this torch")
    obs = Observations(Observation("eager", [CallRecord(0, eager, None)]),
                       Observation("compiled", [CallRecord(0, absent, None)]), extra={EXPORTED: "aot"})
    assert exceptions(None, obs, None) == [], "an export mode this torch lacks judges nothing (2.5.1, flex_attention)"


def test_signature_ignores_numbers_addresses_and_program_names():
    a = signature("outputs", "miscompile", "out[3]:values at 0x7f00 <dynfuzz-12-3-compiled> s77")
    b = signature("outputs", "miscompile", "out[5]:values at 0x7f99 <dynfuzz-99-1-compiled> s12")
    assert a == b
    assert a != signature("outputs", "miscompile", "out[]:stride")
    assert normalise("size 12 /usr/lib/python3/site-packages/torch/_dynamo/x.py") == "size N x.py"


def test_recall_divergences_are_told_apart_by_the_call_plan_perturbation():
    from types import SimpleNamespace

    from dynfuzz.oracles.outputs import diff_key

    diffs = [("out", "values", 1.0, 2.0)]
    sign = SimpleNamespace(tags=frozenset({"probe-float-sign", "pointwise"}))
    method = SimpleNamespace(tags=frozenset({"probe-method-identity", "pointwise"}))
    assert diff_key(diffs, sign, 0) == diff_key(diffs, method, 0) == "out:values"
    assert diff_key(diffs, sign, 1) != diff_key(diffs, method, 1)
    assert "probe-float-sign" in diff_key(diffs, sign, 1)


def test_signature_ignores_tensor_shapes_in_messages():
    message = "modified by an inplace operation: [torch.FloatTensor {}] at version {}"
    a = signature("grads", "backward-crash", message.format("[2, 3]", 1))
    b = signature("grads", "backward-crash", message.format("[4]", 2))
    assert a == b


def test_an_error_the_program_raised_is_a_spurious_exception_named_by_its_message_s_shape():
    """Note [An error the program raised is not torch's]: the compiled frame handed the program a wrong object and
    the program's own line failed on it. That is no internal error of Dynamo (the class was `crash`, "the compiler
    raised an internal error"), and its identity is the shape of the message: the wrong object's Python type, not
    the attribute asked for, a key or anything the program named."""
    from dynfuzz.oracles.exceptions import _compiled_only, category, raised_outside
    from dynfuzz.oracles.model import ExcInfo

    def err(type_, message, outside=True):
        return ExcInfo(type_, "builtins", message, torch_frame="torch/_dynamo/eval_frame.py:_fn",
                       key_frame="torch/_dynamo/eval_frame.py:_fn", outside_torch=outside)

    close = err("AttributeError", "'tuple_iterator' object has no attribute 'close'")
    send = err("AttributeError", "'tuple_iterator' object has no attribute 'send'")
    device = err("AttributeError", "'int' object has no attribute 'device'")
    assert category(close) == "python" and category(err("AttributeError", "x", outside=False)) == "crash"
    found = _compiled_only(close, 0, fullgraph=False)
    assert found.kind == "spurious-exception"
    assert found.raised == raised_outside(send) == "AttributeError: 'tuple_iterator' object has no attribute"
    assert raised_outside(device) == "AttributeError: 'int' object has no attribute"
    assert raised_outside(err("AttributeError", "'Kid0' object has no attribute 'k'")) == \
        "AttributeError: '?' object has no attribute"  # a class of the program's is not named
    assert raised_outside(err("KeyError", "'la0'")) == raised_outside(err("KeyError", "'lb0'")) == "KeyError"
    assert raised_outside(err("IndexError", "pop from empty bytearray")) == "IndexError: pop from empty bytearray"
    assert raised_outside(err("ValueError", "4 is not in deque")) == "ValueError: N is not in deque"
    assert raised_outside(err("TypeError", "inner0() takes 1 positional argument but 2 were given")) == \
        "TypeError: ?() takes N positional argument but N were given"
    assert _compiled_only(err("AttributeError", "x", outside=False), 0, fullgraph=False).raised is None
