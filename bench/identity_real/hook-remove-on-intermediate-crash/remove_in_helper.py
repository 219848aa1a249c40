import torch
def unhook(t):
    t.register_hook(lambda g: -g).remove()
    return t
def f(x):
    return unhook(x.tanh()) + 1
def inputs(device, call=0):
    return (torch.ones(2, device=device, requires_grad=True),)
