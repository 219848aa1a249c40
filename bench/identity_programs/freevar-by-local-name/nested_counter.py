import torch
def counter(start):
    def step(t):
        return t + start
    return step
def f(x):
    start = 10
    s = counter(1)
    return s(x).sum() + start
def inputs(device, call=0):
    return (torch.linspace(-1.0, 1.0, 4, device=device),)
