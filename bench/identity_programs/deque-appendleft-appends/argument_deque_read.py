import collections
import torch
def f(x, d):
    d.appendleft(7)
    return x * d[0]
def inputs(device, call=0):
    return (torch.linspace(-1.0, 1.0, 4, device=device), collections.deque([1, 2, 3]))
