"""[exceptions/crash] call 0: compiler crashed with InternalTorchDynamoError

Minimized by dynfuzz.
torch 2.13.0+cpu, torch.compile(backend="eager"): exits 1 while the bug is present, 0 once fixed."""
DYNFUZZ = {'oracle': 'exceptions',
 'kind': 'crash',
 'signature': 'abc11fa0170e',
 'title': '[exceptions/crash] call 0: compiler crashed with InternalTorchDynamoError',
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

@torch._dynamo.decorators.leaf_function
def leaf_fn0(t, k):
    return (torch.tanh(t) * k + 1, t.sum())

@leaf_fn0.register_fake
def leaf_fn0_fake(t, k):
    return (torch.empty_like(t), t.new_empty(()))

def gen(t):
    yield t
    torch._dynamo.graph_break()
    yield t * 2

def f(x):
    oc0 = leaf_fn0(x, 0.5)[0]
    k1 = sum(gen(x))
    return oc0 * 2 + k1

def inputs(device, call=0):
    return (torch.linspace(-1.0, 1.0, 4, device=device),)
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
