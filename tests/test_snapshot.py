"""The state snapshot sees aliasing, views, metadata and container structure, and diffs them by path."""
import collections
import textwrap

import pytest
import torch
from dynfuzz.oracles.snapshot import diff, take
from dynfuzz.run.compilers import Compiler, CompileSpec


def test_identical_structures_have_no_diff():
    def build():
        a = torch.arange(6.0).reshape(2, 3)
        return {"x": [a, a.t(), {"k": 1.5}]}

    assert diff(take(build()), take(build())) == []


def test_aliasing_is_part_of_the_snapshot():
    a = torch.ones(3)
    shared = take({"args": (a,), "out": a})
    copied = take({"args": (a,), "out": a.clone()})
    aspects = {aspect for _, aspect, _, _ in diff(shared, copied)}
    assert "type" in aspects  # ("@", k) back-reference vs a fresh tensor


def test_view_of_input_is_tagged_with_the_same_storage():
    a = torch.arange(4.0)
    out = diff(take({"a": a, "v": a[1:]}), take({"a": a, "v": a[1:].clone()}))
    assert {(p, k) for p, k, _, _ in out} >= {("['v']", "storage"), ("['v']", "view"), ("['v']", "offset")}


def test_metadata_and_values_are_compared():
    x = torch.zeros(2, 3)
    y = torch.zeros(3, 2).t()
    out = diff(take(x), take(y))
    assert ("", "stride", (3, 1), (1, 2)) in out
    assert not any(k == "values" for _, k, _, _ in out)
    assert diff(take(torch.tensor([1.0, float("nan")])), take(torch.tensor([1.0, float("nan")]))) == []
    assert diff(take(torch.tensor([1.0])), take(torch.tensor([1.0 + 1e-7]))) == []
    assert [k for _, k, _, _ in diff(take(torch.tensor([1.0])), take(torch.tensor([1.1])))] == ["values"]


def test_mutated_flag_tracks_version_changes_not_exact_counts():
    a, b = torch.zeros(2), torch.zeros(2)
    a.add_(1).sub_(1)
    b.add_(0)
    assert diff(take(a), take(b)) == []
    assert [k for _, k, _, _ in diff(take(a), take(torch.zeros(2)))] == ["mutated"]


def test_containers_order_and_subclass_types():
    class MyList(list):
        pass

    od1 = collections.OrderedDict(a=1, b=2)
    od2 = collections.OrderedDict(b=2, a=1)
    assert [k for _, k, _, _ in diff(take(od1), take(od2))] == ["keys"]
    assert [k for _, k, _, _ in diff(take([1]), take(MyList([1])))] == ["type"]
    d1 = collections.deque([1, 2], maxlen=3)
    d2 = collections.deque([1, 2], maxlen=4)
    assert [k for _, k, _, _ in diff(take(d1), take(d2))] == ["maxlen"]


def test_float_sign_of_zero_matters():
    assert diff(take(0.0), take(-0.0)) != []


def test_cells_of_user_functions_are_walked():
    def make(v):
        def g():
            return v

        return g

    src = "def make(v):\n    def g():\n        return v\n    return g\n"
    ns1, ns2 = {"__name__": "dynfuzz_program"}, {"__name__": "dynfuzz_program"}
    exec(compile(src, "<dynfuzz-a>", "exec"), ns1)
    exec(compile(src, "<dynfuzz-b>", "exec"), ns2)
    out = diff(take({"g": ns1["make"](1)}), take({"g": ns2["make"](2)}))
    assert out and out[0][0].endswith("<cells>.v.cell_contents")
    assert make  # a function outside the program is recorded by name only


def test_mutated_is_only_compared_for_tensors_that_existed_before_the_call():
    from dynfuzz.oracles.snapshot import take_tracked

    x = torch.zeros(2)
    _, known = take_tracked({"args": (x,)})
    made_in_place = torch.zeros(2).add_(1)  # one backend computes it in place...
    made_out_of_place = torch.zeros(2) + 1  # ...another out of place: both are correct
    a = take({"args": (x,), "out": made_in_place}, known_tensors=known)
    b = take({"args": (x,), "out": made_out_of_place}, known_tensors=known)
    assert diff(a, b) == []
    x.add_(1)
    c = take({"args": (x,), "out": made_in_place}, known_tensors=known)
    assert [(p, k) for p, k, _, _ in diff(a, c)] == [("['args'][0]", "mutated"), ("['args'][0]", "values")]


def test_diff_records_the_kind_of_each_container_it_reaches():
    import collections

    class MySet(set):
        pass

    bounded = diff(take({"d": collections.deque([1], maxlen=2)}), take({"d": collections.deque([2], maxlen=2)}))
    plain = diff(take({"s": {1}}), take({"s": {2}}))
    sub = diff(take({"s": MySet({1})}), take({"s": MySet({2})}))
    assert bounded.kinds["['d']"] == "deque-maxlen"
    assert plain.kinds["['s']"] == "set" and sub.kinds["['s']"] == "set-subclass"


def test_signatures_tell_a_plain_set_from_a_set_subclass():
    from dynfuzz.oracles.outputs import diff_key

    class MySet(set):
        pass

    plain = diff(take({"s": {1}}), take({"s": {2}}), "state")
    sub = diff(take({"s": MySet({1})}), take({"s": MySet({2})}), "state")
    assert diff_key(plain) != diff_key(sub)


def test_a_container_that_lost_its_subclass_is_a_type_diff_not_an_oracle_crash():
    """torch 2.5.1 turned a global OrderedDict into a plain dict after `C |= {...}` (campaign seed 332): the
    OrderedDict's snapshot carries an attribute list, the dict's does not, and diff raised IndexError."""
    class Tagged(list):
        pass

    tagged = Tagged([1])
    tagged.note = 2
    for before, after in ((collections.OrderedDict(a=1), {"a": 1}), (tagged, [1]), ([1], tagged)):
        aspects = [k for _, k, _, _ in diff(take(before), take(after))]
        assert "type" in aspects or "attributes" in aspects, aspects
    with_attr = collections.OrderedDict(a=1)
    with_attr.note = 3
    assert [k for _, k, _, _ in diff(take(with_attr), take({"a": 1}))] == ["type", "attributes"]


def test_an_iterator_position_is_state_and_reading_it_does_not_advance_it():
    """A global `itertools.count` advanced by a call is changed state: without its position in the snapshot,
    the recompiles oracle called Dynamo's (correct) recompile on the next call an over-guard."""
    import itertools

    count, rng = itertools.count(2, 3), iter(range(4, 9))
    before = take({"c": count, "r": rng})
    assert diff(take({"c": count, "r": rng}), before) == []
    next(count), next(rng)
    changed = diff(before, take({"c": count, "r": rng}))
    assert [(p, a, e, x) for p, a, e, x in changed] == [
        ("['c']", "iterator", "count at count(2, 3)", "count at count(5, 3)"),
        ("['r']", "iterator", "range_iterator at ((range(4, 9),), 0)", "range_iterator at ((range(4, 9),), 1)")]
    assert next(count) == 5 and next(rng) == 5


def test_numpy_arrays_are_compared_by_dtype_shape_and_values():
    import numpy as np

    a = np.array([1.0, 2.0], dtype=np.float32)
    assert diff(take({"a": a}), take({"a": a.copy()})) == []
    assert diff(take({"a": a}), take({"a": np.array([1.0, 3.0], dtype=np.float32)}))
    assert diff(take({"a": a}), take({"a": a.astype(np.float64)}))


def test_a_logger_is_opaque_not_walked_into_torchs_logging_caches():
    """A program's module-level logger shares its manager with torch's loggers, whose level caches fill
    whenever torch compiles: walking into it reported torch's logging as the program's state."""
    import logging

    log = logging.getLogger("dynfuzz.program")
    before = take({"LOG": log, "n": 1})
    logging.getLogger("torch.fx.proxy")._cache[10] = True  # what a compile does to torch's loggers
    after = take({"LOG": log, "n": 1})
    assert diff(before, after) == []
    assert diff(before, take({"LOG": log, "n": 2})) != []


class _Unreadable:
    """Stands for what a torch bug can let out of tracing (a FakeTensor, a functorch wrapper): an object the
    snapshot walk cannot read."""

    @property
    def __dict__(self):
        raise RuntimeError("no data behind it")


class _LeavesUnreadable(Compiler):
    """A compiler whose compiled call runs the program, then leaves an unreadable object in its global `G`."""

    name = "leaves-unreadable"

    def compile(self, fn, options):
        def run(*args):
            out = fn(*args)
            fn.__globals__["G"] = _Unreadable()
            return out

        return run


_WITH_GLOBAL = textwrap.dedent("""\
    import torch
    {head}
    def f(x):
        return x * 2

    def inputs(device, call=0):
        return (torch.linspace(-1.0, 1.0, 3),)

    CALLS = 1
""")


def test_an_object_of_another_type_the_compiled_run_left_is_a_miscompile_not_a_harness_error():
    """Eager's snapshot of `G` succeeded (a tensor); the compiled run left an object of another type there that
    cannot be read: an effects finding of the closed list's classes, a miscompile (it used to be a harness
    error: the snapshot of the compiled side raised)."""
    from dynfuzz.generators.case import Case
    from dynfuzz.run.judge import judge
    from dynfuzz.triage.buckets import divergence_class, tier_of

    spec = CompileSpec()
    result = judge(Case(_WITH_GLOBAL.format(head="G = torch.ones(2)")), _LeavesUnreadable(spec), spec)
    assert [(f.oracle, f.kind) for f in result.findings] == [("effects", "effect-mismatch")]
    assert "state['G']: type: expected 'Tensor', got '_Unreadable'" in result.findings[0].details
    assert divergence_class(result.findings[0]) == "wrong-effect" and tier_of("wrong-effect") == "miscompile"


def test_an_unreadable_object_of_the_type_eager_has_there_is_still_a_harness_error():
    """The same type as eager's (here a class of that name the program defines): the snapshot failed on an
    ordinary object, dynfuzz's gap, so the case is a `snapshot` harness error as before."""
    from dynfuzz.errors import SnapshotError
    from dynfuzz.generators.case import Case
    from dynfuzz.run.judge import judge

    spec = CompileSpec()
    source = _WITH_GLOBAL.format(head="class _Unreadable:\n    pass\n\nG = _Unreadable()")
    with pytest.raises(SnapshotError, match="at \\['state'\\]\\['G'\\], a _Unreadable as in eager's run"):
        judge(Case(source), _LeavesUnreadable(spec), spec)


def test_the_tolerant_walk_marks_only_the_object_that_cannot_be_read():
    snap = take({"a": [1, _Unreadable()], "b": torch.ones(1)}, tolerant=True)
    assert snap[2][0][1][2][1] == ("unreadable", "_Unreadable", "RuntimeError: no data behind it")
    with pytest.raises(RuntimeError):
        take({"a": [1, _Unreadable()]})
