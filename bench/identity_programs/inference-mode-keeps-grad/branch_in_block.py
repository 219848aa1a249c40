import torch
def f(x):
    with torch.inference_mode():
        if torch.is_grad_enabled():
            return x * 2
        return x - 2
def inputs(device, call=0):
    return (torch.linspace(-1.0, 1.0, 4, device=device),)
