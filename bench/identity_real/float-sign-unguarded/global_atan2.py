import math
import torch
S = 0.0
def f(x):
    return x * math.atan2(S, -1.0)
def between(call):
    global S
    S = -0.0
def inputs(device, call=0):
    return (torch.ones(2, device=device),)
