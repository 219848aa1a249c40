import torch
def make():
    n = 0
    class C:
        def bump(self):
            nonlocal n
            n += 1
            return n
    def read():
        return n
    return C, read
C, read = make()
def f(x):
    c = C()
    c.bump()
    return x + read()
def inputs(device, call=0):
    return (torch.linspace(-1.0, 1.0, 4, device=device),)
