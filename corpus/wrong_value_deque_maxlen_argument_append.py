"""[outputs/miscompile] call 0: out[0] values differ

torch 2.13.0+cpu, torch.compile(backend="eager"): exits 1 while the bug is present, 0 once fixed.
"""
DYNFUZZ = {'oracle': 'outputs',
 'kind': 'miscompile',
 'signature': '9dd5c2435a79',
 'title': '[outputs/miscompile] call 0: out[0] values differ',
 'tags': ['container-deque-maxlen',
          'copy_',
          'data-op',
          'global-write',
          'ordering',
          'plan-data-op-fragment',
          'plan-fresh',
          'read-stride',
          'target-global',
          'via-method',
          'where-arg'],
 'torch': '2.13.0+cpu',
 'python': '3.11.7',
 'backend': 'eager',
 'device': 'cpu',
 'fullgraph': False,
 'dynamic': None,
 'compiler': 'torch',
 'entry': 'f',
 'seed': 28,
 'families': [],
 'status': 'open',
 'upstream': None,
 'bucket_cheap': 'outputs/wrong-value: deque-maxlen argument +=',
 'bucket': 'outputs/wrong-value: deque-maxlen argument .append @dynamo',
 'cause': "deque-maxlen argument .append: an output's values differ from eager",
 'layer': 'dynamo'}

import torch

PROGRAM = r'''
import torch
import collections
G0 = torch.linspace(1.0, 1.0, 9)

def f(x, c0):
    c0.append(0)
    c0.append(0)
    k0 = G0[1]
    return (x + sum(c0),)

def inputs(device, call=0):
    return (torch.linspace(-1.0, 1.0, 4, device=device), collections.deque([1, 2], maxlen=3))
'''


def run(source, compiled):
    ns = {"__name__": "repro"}
    exec(source, ns)
    fn = torch.compile(ns["f"], backend="eager") if compiled else ns["f"]
    args = ns["inputs"]("cpu", 0)
    out = fn(*args)
    return out, args, ns


out, args, ns = run(PROGRAM, compiled=False)
c_out, c_args, c_ns = run(PROGRAM, compiled=True)
torch.testing.assert_close(c_out[0], out[0], equal_nan=True, msg=lambda m: "out[0] values: " + m)
