"""[effects/effect-lost] call 0: args[1][1] value differs after the call

torch 2.13.0+cpu, torch.compile(backend="eager"): exits 1 while the bug is present, 0 once fixed."""
DYNFUZZ = {'oracle': 'effects',
 'kind': 'effect-lost',
 'signature': '8e0b19320260',
 'title': '[effects/effect-lost] call 0: args[1][1] value differs after the call',
 'tags': ['container-deque-maxlen', 'ordering', 'via-method', 'where-arg'],
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
 'bucket_cheap': 'effects/lost-effect: deque-maxlen argument +=',
 'bucket': 'effects/lost-effect: deque-maxlen argument .append @dynamo',
 'cause': 'deque-maxlen argument .append: a write the eager call makes to program state is missing after the '
          'compiled call',
 'layer': 'dynamo'}

import torch

PROGRAM = r'''
import torch
import collections

def f(x, a):
    a.append(0)
    a.appendleft(0)
    b = x + sum(a)

def inputs(device, call=0):
    return (torch.linspace(0.0, 0.0, 0, device=device), collections.deque([0, 1], maxlen=3))
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
assert c_args[1][1] == args[1][1], f"args[1][1] value: expected {args[1][1]!r}, got {c_args[1][1]!r}"
