import torch
CONF = {"lr": 0.1, "wd": 0.0}
def f(x):
    names = sorted(CONF)
    return x * len(names[0])
def between(call):
    CONF.pop("lr")
    CONF["momentum"] = 0.9
def inputs(device, call=0):
    return (torch.linspace(-1.0, 1.0, 4, device=device),)
