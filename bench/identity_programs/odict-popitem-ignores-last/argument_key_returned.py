import collections
import torch
def f(x, od):
    od["z"] = 0
    first = od.popitem(last=False)[0]
    return x * 2, first
def inputs(device, call=0):
    return (torch.linspace(-1.0, 1.0, 4, device=device), collections.OrderedDict(m=1, n=2))
