import torch
FLAG = True
def f(x):
    return x + 1 if FLAG else x - 1
def between(call):
    global FLAG
    FLAG = not FLAG
def inputs(device, call=0):
    return (torch.linspace(-1.0, 1.0, 4, device=device),)
