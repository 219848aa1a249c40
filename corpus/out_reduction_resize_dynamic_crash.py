"""[exceptions/spurious-exception] sum(..., out=) into a non-empty out under dynamic=True: TorchRuntimeError

Found by dynfuzz (torch 2.13 campaigns) and minimized by hand. Eager resizes the 2-element out to a 0-d tensor; compiled with dynamic=True raises TorchRuntimeError
('tried to directly modify sizes for customized tensor').
torch 2.13.0+cpu, torch.compile(backend="eager", dynamic=True): exits 1 while the bug is present, 0 once fixed."""
DYNFUZZ = {'oracle': 'exceptions',
 'kind': 'spurious-exception',
 'signature': '43a63c902e60',
 'title': '[exceptions/spurious-exception] sum(..., out=) into a non-empty out under dynamic=True: '
          'TorchRuntimeError',
 'tags': ['out=', 'resize', 'dynamic'],
 'torch': '2.13.0+cpu',
 'backend': 'eager',
 'device': 'cpu',
 'fullgraph': False,
 'compiler': 'torch',
 'entry': 'f',
 'seed': None,
 'families': [],
 'status': 'known',
 'upstream': None}

import torch

PROGRAM = r'''
import torch


def f(x, out):
    torch.sum(x, 0, out=out)  # eager resizes the non-empty out to a 0-d tensor
    return out


def inputs(device, call=0):
    return (torch.ones(4, device=device), torch.zeros(2, device=device))


COMPILE_OPTIONS = {"dynamic": True}
'''


def run(source, compiled):
    ns = {"__name__": "repro"}
    exec(source, ns)
    fn = torch.compile(ns["f"], backend="eager", dynamic=True) if compiled else ns["f"]
    args = ns["inputs"]("cpu", 0)
    try:
        out = fn(*args)
    except Exception as e:
        out = e
    return out, args, ns


out, args, ns = run(PROGRAM, compiled=False)
c_out, c_args, c_ns = run(PROGRAM, compiled=True)
assert isinstance(c_out, Exception) == isinstance(out, Exception), f"compiled raised {c_out!r}; eager returned {out!r}"
