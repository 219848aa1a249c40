import torch
def f(x, l):
    l *= 2
    return x * 2
def inputs(device, call=0):
    return (torch.linspace(-1.0, 1.0, 4, device=device), [1.0, 2.0])
