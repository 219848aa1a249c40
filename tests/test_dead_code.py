"""Dead code the reducer proposes in one candidate: unread locals, empty blocks, and the other outputs."""
from __future__ import annotations

import ast
import textwrap

from dynfuzz.triage.dead_code import drop_dead_locals, keep_one_output
from dynfuzz.triage.reduce import reduce_source


def _dead_removed(source: str) -> str:
    tree = ast.parse(textwrap.dedent(source))
    drop_dead_locals(tree)
    return ast.unparse(tree)


def test_unread_assignments_go_to_a_fixed_point_and_what_is_read_or_shared_stays():
    out = _dead_removed("""\
        COUNT = 0

        def f(x):
            global COUNT
            a = x + 1
            b = a * 2
            COUNT = 3
            kept = x * 5
            obj.attr = x
            items[0] = x
            LOG.append(x)
            n = 0
            def bump():
                nonlocal n
                n = 1
            closed = x - 1
            def read():
                return closed
            if x:
                t = 1
            else:
                t = 2
            while x < 0:
                u = x
            first, second = x, x
            return kept, read, bump
        """)
    for gone in ("a = x + 1", "b = a * 2", "t = 1", "t = 2", "if x", "while x", "first, second"):
        assert gone not in out, gone
    for stays in ("COUNT = 3", "kept = x * 5", "obj.attr = x", "items[0] = x", "LOG.append(x)", "n = 0",
                  "closed = x - 1", "n = 1"):
        assert stays in out, stays


def test_keep_one_output_keeps_a_one_tuple_in_every_return():
    tree = ast.parse(textwrap.dedent("""\
        def f(x):
            if x:
                return (x, x + 1)
            return (x * 2, x * 3)
        """))
    got = [ast.unparse(t) for _, t in keep_one_output(tree, "f")]
    assert len(got) == 2
    assert "return (x + 1,)" in got[1] and "return (x * 3,)" in got[1] and "x * 2" not in got[1]


def test_the_reducer_tries_one_output_with_what_only_the_others_needed_removed_before_deleting_statements():
    """A generated program returns every value it computed; the failure needs one. The candidate after the
    first must return that one value and hold none of the others' computations (one judge call, where deleting
    them needed the tuple shrunk first, one element per call)."""
    source = textwrap.dedent("""\
        import torch


        class Helper:
            def make(self, t):
                return t + 1


        def f(x):
            h = Helper()
            a = h.make(x)
            b = torch.sin(x) * 2
            c = torch.cos(a)
            d = c + a
            return (a, b, c, d)


        def inputs(device, call=0):
            return (torch.ones(2, device=device),)
        """)
    calls = []

    def still_fails(candidate: str) -> bool:
        calls.append(candidate)
        return "torch.sin(x)" in candidate and "return" in candidate

    out, stats = reduce_source(source, still_fails)
    sliced = next(c for c in calls if "return (b,)" in c)
    assert calls.index(sliced) <= 1
    assert "Helper" not in sliced and "cos" not in sliced and "h.make" not in sliced
    assert stats.passes.get("outputs") == 1 and "Helper" not in out


def test_the_output_a_finding_names_is_sliced_first():
    """`out[2] values differ`: the first one-output candidate returns the third element, not the first."""
    from dynfuzz.oracles.model import finding
    from dynfuzz.triage.minimize import output_named

    named = finding("outputs", "miscompile", "call 0: out[2] values differ", "out[]:values")
    assert output_named(named) == 2
    assert output_named(finding("grads", "grad-mismatch", "call 0: args[1].grad values differs", "k")) is None
    source = textwrap.dedent("""\
        import torch


        def f(x):
            a = x + 1
            b = x * 2
            c = x - 3
            return (a, b, c)


        def inputs(device, call=0):
            return (torch.ones(2, device=device),)
        """)
    calls = []

    def still_fails(candidate: str) -> bool:
        calls.append(candidate)
        return "x - 3" in candidate and "return" in candidate

    reduce_source(source, still_fails, output=output_named(named))
    assert "return (c,)" in calls[0] and "x + 1" not in calls[0]


def test_a_fake_only_the_compiled_run_executes_is_left_as_drawn():
    """A leaf function's fake runs only under Dynamo: emptying it kept a 2.14.1 crash's signature and made the
    repro's program invalid (a fake returning None for a function returning a tuple). Renaming stays allowed."""
    source = textwrap.dedent("""\
        import torch


        @torch._dynamo.decorators.leaf_function
        def leaf(t, k):
            return (torch.tanh(t) * k + 1, t.sum())


        @leaf.register_fake
        def leaf_fake(t, k):
            return (torch.empty_like(t), t.new_empty(()))


        def f(x):
            return leaf(x, 2.0)[0]


        def inputs(device, call=0):
            return (torch.ones(2, device=device),)
        """)
    judged = []
    out, _ = reduce_source(source, lambda c: judged.append(c) or ("register_fake" in c and "(x, 2.0)" in c))
    assert "torch.empty_like" in out and "new_empty(())" in out
    assert not any("new_empty" not in c and "register_fake" in c for c in judged), "an emptied fake was judged"
    assert "leaf_fake" not in out, "renamed"


def test_unread_definitions_still_go_when_an_unread_local_must_stay():
    """`made = Counted()` is never read but counts instances (the failure needs it); `Unused` is read by nothing.
    The combined dead-code candidate is rejected, and the definitions alone are tried next."""
    source = textwrap.dedent("""\
        import torch


        class Unused:
            pass


        class Counted:
            n = 0

            def __init__(self):
                Counted.n += 1


        def f(x):
            made = Counted()
            return x + Counted.n


        def inputs(device, call=0):
            return (torch.ones(2, device=device),)
        """)
    calls = []
    out, _ = reduce_source(source, lambda c: calls.append(c) or ("made = Counted()" in c and "Counted.n += 1" in c))
    assert "made = Counted()" not in calls[0] and "Unused" not in calls[0]
    assert "made = Counted()" in calls[1] and "Counted.n += 1" in calls[1] and "Unused" not in calls[1], \
        "the definitions alone, next"
    assert "Unused" not in out and "made = Counted()" in out
