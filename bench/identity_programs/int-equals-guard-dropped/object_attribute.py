import torch
class Cfg:
    def __init__(self):
        self.steps = 2
CFG = Cfg()
def f(x):
    y = x
    for _ in range(CFG.steps):
        y = y * 2
    return y
def between(call):
    CFG.steps = 3
def inputs(device, call=0):
    return (torch.linspace(-1.0, 1.0, 4, device=device),)
