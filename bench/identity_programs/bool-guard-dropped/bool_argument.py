import torch
def f(x, neg):
    if neg:
        return -x
    return x * 2
def inputs(device, call=0):
    return (torch.linspace(-1.0, 1.0, 4, device=device), call == 0)
