import torch
def make():
    log = 0
    class W:
        def write(self, v):
            nonlocal log
            log = v
    return W
W = make()
def f(x):
    W().write(3)
    return x.sin()
def inputs(device, call=0):
    return (torch.linspace(-1.0, 1.0, 4, device=device),)
