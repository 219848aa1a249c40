# [outputs/miscompile] call 0: out values differ
# A `contextlib.nullcontext(value)` made before a graph break and entered after it: Dynamo binds None to
# the `as` target instead of the value, a silent wrong result (torch 2.14.1 and 2.5.1; 2.13 crashes on the same
# program: nullcontext_value_across_graph_break_crash.py). Found by the syntax family.
# torch 2.14.1, torch.compile(backend="eager"): exits 1 while the bug is present, 0 once fixed.
import contextlib
import torch


def f(x):
    cm = contextlib.nullcontext(3)
    torch._dynamo.graph_break()
    with cm as got:
        y = x * 2 + (got is None)
    return y


def inputs(device, call=0):
    return (torch.ones(2, device=device),)


if __name__ == "__main__":
    args = inputs("cpu")
    out = f(*args)
    c_args = inputs("cpu")
    c_out = torch.compile(f, backend="eager")(*c_args)
    torch.testing.assert_close(c_out, out, equal_nan=True, msg=lambda m: "out values (compiled vs eager): " + m)
