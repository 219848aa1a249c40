import torch
class Store:
    def put(self, log):
        log.append("store")
class M1(Store):
    def put(self, log):
        log.append("m1")
        super().put(log)
class M2(Store):
    def put(self, log):
        log.append("m2")
        super().put(log)
class Final(M1, M2):
    pass
def f(x, log):
    Final().put(log)
    return x + 1
def inputs(device, call=0):
    return (torch.linspace(-1.0, 1.0, 4, device=device), [])
