import torch
class Slot:
    pass
def f(x):
    s = Slot()
    s.t = torch.zeros(3)
    other = torch.empty(0)
    s.t.set_(x)
    return x * s.t.size(0), other.numel()
def inputs(device, call=0):
    return (torch.linspace(-1.0, 1.0, 4, device=device),)
