import torch
def f(x):
    if x.is_contiguous():
        return x.sum(0)
    return x.sum(1)
def inputs(device, call=0):
    base = torch.arange(16.0, device=device).reshape(4, 4)
    return (base if call == 0 else base.t(),)
