import torch
def f(x, s):
    s |= {3, 4}
    return x + len(s)
def inputs(device, call=0):
    return (torch.linspace(-1.0, 1.0, 4, device=device), {1, 2})
