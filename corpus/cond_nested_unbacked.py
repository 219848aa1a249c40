"""seed scenario: cond nested unbacked

Hand-written seed scenario: a program of the kind the PyTorch PRs this project started from fixed (cells and closures, hooks, metadata mutation).
torch 2.13.0+cpu, torch.compile(backend="eager"): exits 1 while the bug is present, 0 once fixed."""
DYNFUZZ = {'oracle': 'all',
 'kind': 'seed',
 'signature': None,
 'title': 'seed scenario: cond nested unbacked',
 'tags': ['cond', 'nested-cond', 'unbacked-symint'],
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

torch._dynamo.config.capture_scalar_outputs = True


def f(x):
    k = x.long().max().item()  # an unbacked symint when scalar outputs are captured

    def add(y):
        return y + k

    def sub(y):
        return y - k

    def outer_true(y):
        return torch.cond(y.sum() > 0, add, sub, (y,))

    def outer_false(y):
        return y * 2

    return torch.cond(x.sum() > 0, outer_true, outer_false, (x,))


def inputs(device, call=0):
    return (torch.tensor([3.0, -1.0, 2.0], device=device) * (1 - 2 * call),)
'''
EAGER_PROGRAM = r'''
import torch

torch._dynamo.config.capture_scalar_outputs = True


def f(x):
    k = x.long().max().item()  # an unbacked symint when scalar outputs are captured

    def add(y):
        return y + k

    def sub(y):
        return y - k

    def outer_true(y):
        return (add if y.sum() > 0 else sub)(y)

    def outer_false(y):
        return y * 2

    return (outer_true if x.sum() > 0 else outer_false)(x)


def inputs(device, call=0):
    return (torch.tensor([3.0, -1.0, 2.0], device=device) * (1 - 2 * call),)
'''  # the plain-Python rendering eager runs


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


out, args, ns = run(EAGER_PROGRAM, compiled=False)
c_out, c_args, c_ns = run(PROGRAM, compiled=True)
if isinstance(out, Exception) or isinstance(c_out, Exception):
    assert type(c_out) is type(out), f"eager: {out!r}, compiled: {c_out!r}"
else:
    def tensors(o):
        return [t for t in torch.utils._pytree.tree_leaves(o) if isinstance(t, torch.Tensor)]
    torch.testing.assert_close(tensors(c_out), tensors(out), equal_nan=True)
