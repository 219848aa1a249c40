import torch
class C:
    total = 0
def f(x):
    y = x * 3
    c = C()
    C.total = 4
    return y + c.total
def inputs(device, call=0):
    return (torch.ones(2, device=device),)
