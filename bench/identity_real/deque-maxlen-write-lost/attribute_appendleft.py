import collections
import types
import torch
def f(x, box):
    box.hist.appendleft(4)
    return x - 1
def inputs(device, call=0):
    return (torch.ones(2, device=device), types.SimpleNamespace(hist=collections.deque([0, 1, 2], maxlen=3)))
