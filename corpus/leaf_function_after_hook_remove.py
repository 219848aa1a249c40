"""[exceptions/crash] call 0: compiler crashed with InternalTorchDynamoError

Reduced by hand: dynfuzz's minimizer turned the fake into one returning None, API misuse that raises the same error.
torch 2.13.0+cpu, torch.compile(backend="eager"): exits 1 while the bug is present, 0 once fixed."""
DYNFUZZ = {'oracle': 'exceptions',
 'kind': 'crash',
 'signature': 'abc11fa0170e',
 'title': '[exceptions/crash] call 0: compiler crashed with InternalTorchDynamoError',
 'tags': ['stdlib', 'stdlib-opaque-calls'],
 'torch': '2.13.0+cpu',
 'python': '3.11.7',
 'backend': 'eager',
 'device': 'cpu',
 'fullgraph': False,
 'dynamic': None,
 'compiler': 'torch',
 'entry': 'f',
 'seed': 0,
 'families': [],
 'status': 'open',
 'upstream': None}

import sys
import types

import torch

PROGRAM = r'''
import torch


@torch._dynamo.decorators.leaf_function
def leaf_fn(t):
    return (t * 2,)


@leaf_fn.register_fake
def leaf_fn_fake(t):
    return (torch.empty_like(t),)


def f(x):
    w = x.clone().requires_grad_()
    handle = w.register_hook(lambda g: g * 2)
    w.sum().backward()
    handle.remove()
    return leaf_fn(x)[0]


def inputs(device, call=0):
    return (torch.linspace(-1.0, 1.0, 2, device=device),)
'''


def run(source, compiled):
    ns = vars(sys.modules.setdefault(f"repro_{compiled}", types.ModuleType(f"repro_{compiled}")))
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
