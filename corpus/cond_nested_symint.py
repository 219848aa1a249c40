"""seed scenario: cond nested symint

Hand-written seed scenario: a program of the kind the PyTorch PRs this project started from fixed (cells and closures, hooks, metadata mutation).
torch 2.13.0+cpu, torch.compile(backend="eager", dynamic=True): exits 1 while the bug is present, 0 once fixed."""
DYNFUZZ = {'oracle': 'all',
 'kind': 'seed',
 'signature': None,
 'title': 'seed scenario: cond nested symint',
 'tags': ['cond', 'nested-cond', 'symint', 'dynamic'],
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
    n = x.size(0)

    def add(y):
        return y + n

    def sub(y):
        return y - n

    def outer_true(y):
        return torch.cond(y.sum() > 0, add, sub, (y,))

    def outer_false(y):
        return y * n

    return torch.cond(x.shape[0] > 2, outer_true, outer_false, (x,))


def inputs(device, call=0):
    return (torch.linspace(-1.0, 2.0, 4 - call, device=device),)


CALLS = 3
COMPILE_OPTIONS = {"dynamic": True}
'''
EAGER_PROGRAM = r'''
import torch


def f(x):
    n = x.size(0)

    def add(y):
        return y + n

    def sub(y):
        return y - n

    def outer_true(y):
        return (add if y.sum() > 0 else sub)(y)

    def outer_false(y):
        return y * n

    return (outer_true if x.shape[0] > 2 else outer_false)(x)


def inputs(device, call=0):
    return (torch.linspace(-1.0, 2.0, 4 - call, device=device),)


CALLS = 3
COMPILE_OPTIONS = {"dynamic": True}
'''  # the plain-Python rendering eager runs


def run(source, compiled):
    module = types.ModuleType(f"repro_{'compiled' if compiled else 'eager'}")  # Dynamo imports it for cond
    sys.modules[module.__name__] = module
    ns = vars(module)
    exec(source, ns)
    fn = torch.compile(ns["f"], backend="eager", dynamic=True) if compiled else ns["f"]
    for call in range(3):
        args = ns["inputs"]("cpu", call)
        try:
            out = fn(*args)
        except Exception as e:
            out = e
    return out, args, ns


out, args, ns = run(EAGER_PROGRAM, compiled=False)
c_out, c_args, c_ns = run(PROGRAM, compiled=True)
if isinstance(out, Exception) or isinstance(c_out, Exception):
    assert type(c_out) is type(out), f"eager: {out!r}, compiled: {c_out!r}"
else:
    def tensors(o):
        return [t for t in torch.utils._pytree.tree_leaves(o) if isinstance(t, torch.Tensor)]
    torch.testing.assert_close(tensors(c_out), tensors(out), equal_nan=True)
