import torch
def f(x):
    y = x.exp()
    keep = y.register_hook(lambda g: g + 1)
    drop = y.register_hook(lambda g: g * 0)
    drop.remove()
    return y * 3
def inputs(device, call=0):
    return (torch.ones(2, device=device, requires_grad=True),)
