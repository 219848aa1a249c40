import torch
class Seen(set):
    pass
SEEN = Seen({"a"})
def f(x):
    SEEN.add("b")
    return x * 3
def inputs(device, call=0):
    return (torch.ones(2, device=device),)
