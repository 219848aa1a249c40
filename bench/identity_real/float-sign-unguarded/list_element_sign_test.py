import math
import torch
def f(x, vals):
    if math.copysign(1.0, vals[0]) < 0:
        return x - 1
    return x + 1
def inputs(device, call=0):
    return (torch.ones(2, device=device), [-0.0 if call else 0.0])
