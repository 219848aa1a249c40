import math
import types
import torch
def f(x, cfg):
    return x - math.copysign(2.0, cfg.eps)
def inputs(device, call=0):
    return (torch.ones(2, device=device), types.SimpleNamespace(eps=-0.0 if call else 0.0))
