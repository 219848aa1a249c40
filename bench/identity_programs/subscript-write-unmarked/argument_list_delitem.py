import torch
def f(x, items):
    del items[1]
    return x * 2
def inputs(device, call=0):
    return (torch.linspace(-1.0, 1.0, 4, device=device), [4, 5, 6])
