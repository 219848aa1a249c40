import collections
import torch
def f(x):
    q = collections.deque()
    q.append(1)
    q.appendleft(2)
    return x.sum(), list(q)
def inputs(device, call=0):
    return (torch.linspace(-1.0, 1.0, 4, device=device),)
