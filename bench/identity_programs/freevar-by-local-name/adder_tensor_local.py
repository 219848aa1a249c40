import torch
def make_adder(offset):
    return lambda t: t + offset
def f(x):
    offset = x * 0
    add = make_adder(1.0)
    return add(x), offset
def inputs(device, call=0):
    return (torch.linspace(-1.0, 1.0, 4, device=device),)
