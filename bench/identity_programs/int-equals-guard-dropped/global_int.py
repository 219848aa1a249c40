import torch
K = 1
def f(x):
    return x + K
def between(call):
    global K
    K = 4
def inputs(device, call=0):
    return (torch.linspace(-1.0, 1.0, 4, device=device),)
