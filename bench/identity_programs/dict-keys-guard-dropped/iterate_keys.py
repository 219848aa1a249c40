import torch
def f(x, d):
    keys = list(d.keys())
    return x + len(keys[-1])
def inputs(device, call=0):
    x = torch.linspace(-1.0, 1.0, 4, device=device)
    return (x, {"a": 1, "bb": 2} if call == 0 else {"a": 1, "cccc": 2})
