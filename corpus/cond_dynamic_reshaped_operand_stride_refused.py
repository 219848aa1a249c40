"""[exceptions/spurious-exception] call 0: compiled raised TorchRuntimeError, eager did not

Minimized by dynfuzz.
torch 2.13.0+cpu, torch.compile(backend="eager", dynamic=True): exits 1 while the bug is present, 0 once fixed."""
DYNFUZZ = {'oracle': 'exceptions',
 'kind': 'spurious-exception',
 'signature': 'ba537c7c5249',
 'title': '[exceptions/spurious-exception] call 0: compiled raised TorchRuntimeError, eager did not',
 'tags': [],
 'torch': '2.13.0+cpu',
 'python': '3.11.7',
 'backend': 'eager',
 'device': 'cpu',
 'fullgraph': False,
 'dynamic': None,
 'compiler': 'torch',
 'entry': 'f',
 'seed': None,
 'families': [],
 'status': 'open',
 'upstream': None}

import sys
import types

import torch

PROGRAM = r'''
import torch

def b(a):
    return a * 0

def c(a):
    return a.cos()

def f(y):
    o = y.reshape(1, 1, -1, 1).reshape(y.shape)
    return torch.cond(o.mean() > 0, b, c, (o,))

def inputs(device, call=0):
    return (torch.linspace(0.0, 0.0, 16, device=device).reshape(4, 4),)
COMPILE_OPTIONS = {'dynamic': True}
'''


def run(source, compiled):
    ns = vars(sys.modules.setdefault(f"repro_{compiled}", types.ModuleType(f"repro_{compiled}")))
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
