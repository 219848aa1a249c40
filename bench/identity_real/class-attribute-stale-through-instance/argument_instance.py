import torch
class Unit:
    offset = 0
def f(x, u):
    Unit.offset = 3
    return x + u.offset
def inputs(device, call=0):
    return (torch.ones(2, device=device), Unit())
