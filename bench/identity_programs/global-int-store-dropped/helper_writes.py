import torch
LIMIT = 3
def set_limit(v):
    global LIMIT
    LIMIT = v
def f(x):
    set_limit(7)
    return x * 2
def inputs(device, call=0):
    return (torch.linspace(-1.0, 1.0, 4, device=device),)
