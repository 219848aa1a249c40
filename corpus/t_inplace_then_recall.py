"""seed scenario: t inplace then recall

Hand-written seed scenario: a program of the kind the PyTorch PRs this project started from fixed (cells and closures, hooks, metadata mutation).
torch 2.13.0+cpu, torch.compile(backend="eager"): exits 1 while the bug is present, 0 once fixed."""
DYNFUZZ = {'oracle': 'all',
 'kind': 'seed',
 'signature': None,
 'title': 'seed scenario: t inplace then recall',
 'tags': ['metadata-mutation', 't_', 'recall'],
 'torch': '2.13.0+cpu',
 'backend': 'eager',
 'device': 'cpu',
 'fullgraph': False,
 'compiler': 'torch',
 'entry': 'f',
 'seed': None,
 'families': [],
 'status': 'passing',
 'upstream': None}

import torch

PROGRAM = r'''
import torch


def f(x):
    x.t_()  # mutates the input's strides and shape in place
    return x + 1, x.stride()


def inputs(device, call=0):
    return (torch.arange(6.0, device=device).reshape(2, 3),)


CALLS = 3
'''


def run(source, compiled):
    ns = {"__name__": "repro"}
    exec(source, ns)
    fn = torch.compile(ns["f"], backend="eager") if compiled else ns["f"]
    for call in range(3):
        args = ns["inputs"]("cpu", call)
        try:
            out = fn(*args)
        except Exception as e:
            out = e
    return out, args, ns


out, args, ns = run(PROGRAM, compiled=False)
c_out, c_args, c_ns = run(PROGRAM, compiled=True)
if isinstance(out, Exception) or isinstance(c_out, Exception):
    assert type(c_out) is type(out), f"eager: {out!r}, compiled: {c_out!r}"
else:
    def tensors(o):
        return [t for t in torch.utils._pytree.tree_leaves(o) if isinstance(t, torch.Tensor)]
    torch.testing.assert_close(tensors(c_out), tensors(out), equal_nan=True)
