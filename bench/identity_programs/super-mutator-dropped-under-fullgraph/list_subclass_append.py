import torch
class Log(list):
    def append(self, v):
        super().append(v)
L = Log()
def f(x):
    L.append(1)
    return x + 1
COMPILE_OPTIONS = {"fullgraph": True}
def inputs(device, call=0):
    return (torch.linspace(-1.0, 1.0, 4, device=device),)
