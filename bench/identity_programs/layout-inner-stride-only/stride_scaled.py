import torch
def f(x):
    return x * x.stride(0)
def inputs(device, call=0):
    base = torch.arange(32.0, device=device).reshape(8, 4)
    return (base[:4] if call == 0 else base[::2],)
