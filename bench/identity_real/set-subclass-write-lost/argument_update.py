import torch
class Tags(set):
    pass
def f(x, tags):
    tags.update({0})
    return x + len(tags)
def inputs(device, call=0):
    return (torch.zeros(2, device=device), Tags({1}))
