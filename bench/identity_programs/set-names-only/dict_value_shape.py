import torch
def f(x):
    t = torch.ones(1)
    box = {"t": t}
    t.set_(x.clone())
    return x + box["t"].shape[0]
def inputs(device, call=0):
    return (torch.linspace(-1.0, 1.0, 4, device=device),)
