"""[exceptions/crash] removing a hook handle of an intermediate: AssertionError in Dynamo

Found by dynfuzz (campaign seed 0) and minimized. Compiled raises AssertionError 'idx must not be None for hook removal'; eager runs.
torch 2.13.0+cpu, torch.compile(backend="eager"): exits 1 while the bug is present, 0 once fixed."""
DYNFUZZ = {'oracle': 'exceptions',
 'kind': 'crash',
 'signature': '9edf3a65597c',
 'title': '[exceptions/crash] removing a hook handle of an intermediate: AssertionError in Dynamo',
 'tags': ['hook', 'intermediate', 'hook-remove'],
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


def f(x):
    handle = (x * 2).register_hook(lambda g: g)  # a hook on an intermediate, removed at once
    handle.remove()
    return x.sin()


def inputs(device, call=0):
    return (torch.linspace(-1.0, 1.0, 3, device=device).requires_grad_(),)
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
