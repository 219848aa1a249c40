import torch
class Rec:
    def __init__(self):
        self.base = 0
def f(x, r):
    r.left = x.sum().item() > 10
    r.right = 3
    return x * 2
def inputs(device, call=0):
    return (torch.linspace(-1.0, 1.0, 4, device=device), Rec())
