import torch
from torch._higher_order_ops.wrap import wrap
def f(x):
    return wrap(lambda t: t.sin() * 2, x)
def inputs(device, call=0):
    return (torch.linspace(-1.0, 1.0, 4, device=device),)
