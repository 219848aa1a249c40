import torch
def make(t):
    def scale(x):
        return x * t
    def swap(n):
        nonlocal t
        t = n
    return scale, swap
W = torch.full((4,), 2.0)
scale_1, swap_1 = make(W)
scale_2, swap_2 = make(W)
def f(x):
    swap_1(x)
    return scale_2(x)
def inputs(device, call=0):
    return (torch.linspace(-1.0, 1.0, 4, device=device),)
