import torch
def f(x):
    buf = torch.empty(1)
    d = {"b": buf}
    torch.mul(x, 2, out=buf)
    return x + d["b"].shape[0]
def inputs(device, call=0):
    return (torch.linspace(-1.0, 1.0, 4, device=device),)
