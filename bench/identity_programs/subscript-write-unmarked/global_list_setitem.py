import torch
L = [1, 2, 3]
def f(x):
    L[0] = 9
    return x + 1
def inputs(device, call=0):
    return (torch.linspace(-1.0, 1.0, 4, device=device),)
