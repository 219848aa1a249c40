import torch
def f(x, n):
    return x * n
def inputs(device, call=0):
    return (torch.linspace(-1.0, 1.0, 4, device=device), 2 + call)
