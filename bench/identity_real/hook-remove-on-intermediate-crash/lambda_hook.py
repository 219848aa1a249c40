import torch
def f(x):
    handle = (x * 2).register_hook(lambda g: g)
    handle.remove()
    return x.sin()
def inputs(device, call=0):
    return (torch.ones(3, device=device, requires_grad=True),)
