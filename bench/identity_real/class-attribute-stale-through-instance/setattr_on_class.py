import torch
class Cfg:
    scale = 2.0
def f(x):
    cfg = Cfg()
    setattr(Cfg, "scale", 7.0)
    return x * cfg.scale
def inputs(device, call=0):
    return (torch.ones(3, device=device),)
