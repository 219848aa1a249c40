import torch
def f(x):
    t = torch.empty(0)
    held = [t]
    torch.add(x, 1, out=t)
    return x * held[0].numel()
def inputs(device, call=0):
    return (torch.linspace(-1.0, 1.0, 4, device=device),)
