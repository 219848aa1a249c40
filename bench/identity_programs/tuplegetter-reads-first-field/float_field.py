import typing
import torch
class Rec(typing.NamedTuple):
    offset: float
    scale: float
def f(x):
    r = Rec(1.0, 4.0)
    return x * Rec.scale.__get__(r)
def inputs(device, call=0):
    return (torch.linspace(-1.0, 1.0, 4, device=device),)
