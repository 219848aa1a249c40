import torch
COUNT = 0
def f(x):
    global COUNT
    COUNT += 1
    return x.cos()
def inputs(device, call=0):
    return (torch.linspace(-1.0, 1.0, 4, device=device),)
