import torch
N = 1
def f(x):
    global N
    N = 5
    return x + N
def inputs(device, call=0):
    return (torch.linspace(-1.0, 1.0, 4, device=device),)
