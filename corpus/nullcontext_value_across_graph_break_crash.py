# [exceptions/crash] call 0: compiler crashed with InternalTorchDynamoError
# A `contextlib.nullcontext(value)` made before a graph break and entered after it: on torch 2.13 Dynamo
# crashes reconstructing the context object ('ConstantVariable' object is not iterable); 2.14.1 and 2.5.1 compile
# it but bind None to the `as` target (nullcontext_value_across_graph_break_wrong_value.py). Found by the syntax family.
# torch 2.13.0+cpu, torch.compile(backend="eager"): exits 1 while the bug is present, 0 once fixed.
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
    def run(fn):
        args = inputs("cpu")
        try:
            out = fn(*args)
        except Exception as e:  # an exception is the call's result
            out = e
        return out, args
    out, args = run(f)
    c_out, c_args = run(torch.compile(f, backend="eager"))
    assert isinstance(c_out, Exception) == isinstance(out, Exception), f"compiled raised {c_out!r}; eager returned {out!r}"
    tensors = lambda o: [t for t in torch.utils._pytree.tree_leaves(o) if isinstance(t, torch.Tensor)]
    torch.testing.assert_close(tensors(c_out), tensors(out), equal_nan=True, msg=lambda m: "eager vs compiled: " + m)
