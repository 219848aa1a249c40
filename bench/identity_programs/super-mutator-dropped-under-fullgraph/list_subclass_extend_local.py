import torch
class Bag(list):
    def extend(self, vs):
        super().extend(vs)
def f(x):
    b = Bag()
    b.extend([1, 2])
    return x + len(b)
COMPILE_OPTIONS = {"fullgraph": True}
def inputs(device, call=0):
    return (torch.linspace(-1.0, 1.0, 4, device=device),)
