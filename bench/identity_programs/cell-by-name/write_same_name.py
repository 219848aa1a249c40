import torch
def outer():
    total = 0
    def bump():
        nonlocal total
        total += 1
        return total
    return bump
BUMP = outer()
def f(x):
    total = 100
    def read():
        return total
    return x + BUMP() + read()
def inputs(device, call=0):
    return (torch.linspace(-1.0, 1.0, 4, device=device),)
