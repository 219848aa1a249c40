import collections
import torch
def f(x, items):
    items[0].extendleft([8])
    return x.sum()
def inputs(device, call=0):
    return (torch.ones(2, device=device), [collections.deque([3, 6], maxlen=2)])
