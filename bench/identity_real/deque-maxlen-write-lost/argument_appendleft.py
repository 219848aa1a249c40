import collections
import torch
def f(x, q):
    q.appendleft(7)
    return x * 2
def inputs(device, call=0):
    return (torch.ones(3, device=device), collections.deque([1, 2], maxlen=2))
