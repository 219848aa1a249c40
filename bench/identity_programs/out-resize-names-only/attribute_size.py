import torch
class Slot:
    pass
def f(x):
    s = Slot()
    s.buf = torch.empty(2)
    torch.sin(x, out=s.buf)
    return x * s.buf.size(0)
def inputs(device, call=0):
    return (torch.linspace(-1.0, 1.0, 4, device=device),)
