"""seed scenario: cond branch mutates input

Hand-written seed scenario: a program of the kind the PyTorch PRs this project started from fixed (cells and closures, hooks, metadata mutation).
torch 2.13.0+cpu, torch.compile(backend="eager"): exits 1 while the bug is present, 0 once fixed."""
DYNFUZZ = {'oracle': 'all',
 'kind': 'seed',
 'signature': None,
 'title': 'seed scenario: cond branch mutates input',
 'tags': ['cond', 'input-mutation', 'intended-error'],
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

import sys
import types

import torch

PROGRAM = r'''
import torch


def f(x):
    def true_fn(y):
        y.add_(1)  # illegal in a cond branch: eager torch.cond refuses it too
        return y.sin()

    def false_fn(y):
        return y.cos()

    return torch.cond(x.sum() > 0, true_fn, false_fn, (x,))


def inputs(device, call=0):
    return (torch.ones(3, device=device),)
'''


def run(source, compiled):
    module = types.ModuleType(f"repro_{'compiled' if compiled else 'eager'}")  # Dynamo imports it for cond
    sys.modules[module.__name__] = module
    ns = vars(module)
    exec(source, ns)
    fn = torch.compile(ns["f"], backend="eager") if compiled else ns["f"]
    for call in range(2):
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
