# [exceptions/crash] call 0: compiler crashed with Unsupported
# torch 2.14.1, torch.compile(backend="eager", fullgraph=True): exits 1 while the bug is present, 0 once fixed.
import torch

def f(y):
    with torch.enable_grad():
        a = torch.linspace(0.0, 0.0, 0, device=y.device).requires_grad_()
        c = a.register_post_accumulate_grad_hook(lambda p: p.grad.sum())

def inputs(device, call=0):
    return (torch.linspace(0.0, 0.0, 0, device=device),)
COMPILE_OPTIONS = {'fullgraph': True}


if __name__ == "__main__":
    args = inputs("cpu")
    out = f(*args)
    with torch._dynamo.config.patch(capture_scalar_outputs=True, trace_autograd_ops=True):
        c_args = inputs("cpu")
        c_out = torch.compile(f, backend="eager", fullgraph=True)(*c_args)
    tensors = lambda o: [t for t in torch.utils._pytree.tree_leaves(o) if isinstance(t, torch.Tensor)]
    torch.testing.assert_close(tensors(c_out), tensors(out), equal_nan=True, msg=lambda m: "eager vs compiled: " + m)
