import torch
def f(x):
    t = torch.zeros(2)
    held = [t]
    t.set_(x)
    return x * held[0].numel()
def inputs(device, call=0):
    return (torch.linspace(-1.0, 1.0, 4, device=device),)
