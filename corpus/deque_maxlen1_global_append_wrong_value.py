"""[outputs/miscompile] call 1: out[0] values differ

torch 2.13.0+cpu, torch.compile(backend="eager"): exits 1 while the bug is present, 0 once fixed."""
DYNFUZZ = {'oracle': 'outputs',
 'kind': 'miscompile',
 'signature': '9a81d5eba7ae',
 'title': '[outputs/miscompile] call 1: out[0] values differ',
 'tags': ['container', 'container-deque-maxlen', 'via-method', 'where-global'],
 'torch': '2.13.0+cpu',
 'python': '3.11.7',
 'backend': 'eager',
 'device': 'cpu',
 'fullgraph': False,
 'dynamic': None,
 'compiler': 'torch',
 'entry': 'f',
 'seed': 11,
 'families': [],
 'status': 'open',
 'upstream': None,
 'bucket_cheap': 'outputs/wrong-value: set local -=',
 'bucket': 'outputs/wrong-value: deque-maxlen global .append @dynamo',
 'cause': "deque-maxlen global .append: an output's values differ from eager",
 'layer': 'dynamo'}

import sys
import types

import torch

PROGRAM = r'''
import torch
import collections
a = collections.deque([], maxlen=1)

def f(x):
    a.append(1)
    return (x + sum(a),)

def inputs(device, call=0):
    return (torch.linspace(0.0, 0.0, 1, device=device),)
'''


def run(source, compiled):
    ns = vars(sys.modules.setdefault(f"repro_{compiled}", types.ModuleType(f"repro_{compiled}")))
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
torch.testing.assert_close(c_out[0], out[0], equal_nan=True, msg=lambda m: "out[0] values: " + m)
