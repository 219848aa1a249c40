import torch
def mode():
    return 1.0 if torch.is_grad_enabled() else 0.0
def f(x):
    with torch.inference_mode():
        m = mode()
    return x * m
def inputs(device, call=0):
    return (torch.linspace(-1.0, 1.0, 4, device=device),)
