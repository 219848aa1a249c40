import typing
import torch
class Pair(typing.NamedTuple):
    left: torch.Tensor
    right: torch.Tensor
def f(x, p):
    return Pair.right.__get__(p) - x
def inputs(device, call=0):
    x = torch.linspace(-1.0, 1.0, 4, device=device)
    return (x, Pair(x, x * 3))
