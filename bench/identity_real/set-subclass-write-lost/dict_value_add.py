import torch
class Bag(set):
    pass
def f(x, table):
    table["k"].add(10)
    return x.cos()
def inputs(device, call=0):
    return (torch.ones(2, device=device), {"k": Bag({5})})
