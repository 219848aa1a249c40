"""[exceptions/spurious-exception] call 0: compiled raised AttributeError, eager did not

Minimized by dynfuzz. A missing attribute read on a tensor computed in the frame raises AttributeError out
of the compiled call instead of entering the `except AttributeError` handler (on a graph input the handler
runs: pytorch/pytorch#174166 was fixed for that case only). Found by the syntax family (exception-attrs).
torch 2.13.0+cpu, torch.compile(backend="eager"): exits 1 while the bug is present, 0 once fixed."""
DYNFUZZ = {'oracle': 'exceptions',
 'kind': 'spurious-exception',
 'signature': '829eb80fd4cb',
 'title': '[exceptions/spurious-exception] call 0: compiled raised AttributeError, eager did not',
 'tags': ['exception-attrs', 'syntax'],
 'torch': '2.13.0+cpu',
 'python': '3.11.7',
 'backend': 'eager',
 'device': 'cpu',
 'fullgraph': False,
 'dynamic': None,
 'compiler': 'torch',
 'entry': 'f',
 'seed': None,
 'families': ['syntax'],
 'status': 'known',
 'upstream': 'https://github.com/pytorch/pytorch/issues/174166'}

import torch

PROGRAM = r'''
import torch

def f(x):
    c = x * 0
    try:
        d = c.no_such_attribute
    except AttributeError:
        d = c
    return d

def inputs(device, call=0):
    return (torch.linspace(0.0, 0.0, 0, device=device),)
'''


def run(source, compiled):
    ns = {"__name__": "repro"}
    exec(source, ns)
    fn = torch.compile(ns["f"], backend="eager") if compiled else ns["f"]
    args = ns["inputs"]("cpu", 0)
    try:
        out = fn(*args)
    except Exception as e:
        out = e
    return out, args, ns


out, args, ns = run(PROGRAM, compiled=False)
c_out, c_args, c_ns = run(PROGRAM, compiled=True)
assert isinstance(c_out, Exception) == isinstance(out, Exception), f"compiled raised {c_out!r}; eager returned {out!r}"
