import torch
def double(g):
    return g * 2
def f(x):
    y = x + 1
    h = y.register_hook(double)
    h.remove()
    return y.cos()
def inputs(device, call=0):
    return (torch.ones(2, device=device, requires_grad=True),)
