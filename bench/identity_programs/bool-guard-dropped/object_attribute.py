import torch
class Cfg:
    def __init__(self):
        self.enabled = False
CFG = Cfg()
def f(x):
    y = x.cos()
    if CFG.enabled:
        y = y + 10
    return y
def between(call):
    CFG.enabled = True
def inputs(device, call=0):
    return (torch.linspace(-1.0, 1.0, 4, device=device),)
