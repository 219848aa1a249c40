import functools
import torch
def f(x):
    add = functools.partial(torch.add, alpha=2)
    return add(x, x, alpha=3)
def inputs(device, call=0):
    return (torch.linspace(-1.0, 1.0, 4, device=device),)
