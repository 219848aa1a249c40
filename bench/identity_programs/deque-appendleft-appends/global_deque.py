import collections
import torch
D = collections.deque([1, 2])
def f(x):
    D.appendleft(0)
    return x + 1
def inputs(device, call=0):
    return (torch.linspace(-1.0, 1.0, 4, device=device),)
