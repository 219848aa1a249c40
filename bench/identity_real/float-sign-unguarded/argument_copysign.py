import math
import torch
def f(x, s):
    return x + math.copysign(1.0, s)
def inputs(device, call=0):
    return (torch.zeros(2, device=device), -0.0 if call else 0.0)
