import torch
class Counter:
    step = 1
    def scaled(self, t):
        return t * self.step
def f(x):
    k = Counter()
    Counter.step = 5
    return k.scaled(x)
def inputs(device, call=0):
    return (torch.ones(2, device=device),)
