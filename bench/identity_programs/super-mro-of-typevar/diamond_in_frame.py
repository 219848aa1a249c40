import torch
class Root:
    def name(self):
        return 1
class Left(Root):
    def name(self):
        return super().name() * 10
class Right(Root):
    def name(self):
        return super().name() + 5
class Both(Left, Right):
    pass
def f(x):
    return x + Both().name()
def inputs(device, call=0):
    return (torch.linspace(-1.0, 1.0, 4, device=device),)
