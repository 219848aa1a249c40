# [outputs/miscompile] call 0: out[0] type, view differ
# torch 2.14.1, torch.compile(backend="eager"): exits 1 while the bug is present, 0 once fixed.
import torch

class a(torch.Tensor):
    pass

def f(b):
    c = b
    return (c.as_subclass(torch.Tensor) + isinstance(c, a),)

def inputs(device, call=0):
    return (torch.linspace(0.0, 0.0, 0, device=device).as_subclass(a),)
DYNAMO_CONFIG = {'nested_graph_breaks': True}


if __name__ == "__main__":
    out = f(*inputs("cpu"))
    with torch._dynamo.config.patch(nested_graph_breaks=True):
        c_out = torch.compile(f, backend="eager")(*inputs("cpu"))
    assert type(c_out[0]).__name__ == type(out[0]).__name__, f"out[0] type: eager {type(out[0]).__name__!r}, compiled {type(c_out[0]).__name__!r}"
