"""[exceptions/crash] call 0: compiler crashed with InternalTorchDynamoError

Minimized by dynfuzz. A `contextlib.nullcontext(value)` made before a graph break and entered after it:
Dynamo reconstructs the context object and crashes (`'ConstantVariable' object is not iterable`). Without
an enter value (`nullcontext()`) it works (pytorch/pytorch#125518 fixed that case). Found by the syntax family.
torch 2.13.0+cpu, torch.compile(backend="eager"): exits 1 while the bug is present, 0 once fixed."""
DYNFUZZ = {'oracle': 'exceptions',
 'kind': 'crash',
 'signature': 'd77ceccb9f03',
 'title': '[exceptions/crash] call 0: compiler crashed with InternalTorchDynamoError',
 'tags': ['syntax', 'with-graph-break'],
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
 'upstream': None}

import torch

PROGRAM = r'''
import torch
import contextlib

def f():
    a = contextlib.nullcontext(0)
    torch._dynamo.graph_break()
    with a as v:
        pass

def inputs(device, call=0):
    return ()
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
