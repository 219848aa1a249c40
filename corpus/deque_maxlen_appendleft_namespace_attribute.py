"""[effects/effect-lost] call 1: state['a'].items[1] value differs after the call

torch 2.13.0+cpu, torch.compile(backend="eager"): exits 1 while the bug is present, 0 once fixed."""
DYNFUZZ = {'oracle': 'effects',
 'kind': 'effect-lost',
 'signature': 'a42ec5821219',
 'title': "[effects/effect-lost] call 1: state['a'].items[1] value differs after the call",
 'tags': ['container', 'container-deque-maxlen', 'via-method', 'where-object'],
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
 'bucket_cheap': 'effects/lost-effect: set local -=',
 'bucket': 'effects/lost-effect: tensor ops',
 'cause': 'tensor ops: a write the eager call makes to program state is missing after the compiled call',
 'layer': None}

import sys
import types

import torch

PROGRAM = r'''
import torch
import collections
import types
a = types.SimpleNamespace(items=collections.deque([1], maxlen=2))

def f(x):
    a.items.appendleft(0)
    b = x + sum(a.items)

def inputs(device, call=0):
    return (torch.linspace(0.0, 0.0, 0, device=device),)
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
assert c_ns['a'].items[1] == ns['a'].items[1], f"state['a'].items[1] value: expected {ns['a'].items[1]!r}, got {c_ns['a'].items[1]!r}"
