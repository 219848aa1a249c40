import torch
class Holder:
    def __init__(self):
        self.vals = [0.5, 1.5, 2.5, 3.5]
H = Holder()
def f(x):
    H.vals[1:3] = [7.0]
    return x - 1
def inputs(device, call=0):
    return (torch.linspace(-1.0, 1.0, 4, device=device),)
