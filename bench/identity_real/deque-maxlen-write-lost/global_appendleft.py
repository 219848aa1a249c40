import collections
import torch
d = collections.deque([2, 0, 5], maxlen=3)
def f(x):
    d.appendleft(9)
    return x + 1
def inputs(device, call=0):
    return (torch.zeros(2, device=device),)
