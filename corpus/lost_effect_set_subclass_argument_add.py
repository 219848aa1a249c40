"""[effects/effect-lost] call 0: args[1] members differs after the call

torch 2.13.0+cpu, torch.compile(backend="eager"): exits 1 while the bug is present, 0 once fixed."""
DYNFUZZ = {'oracle': 'effects',
 'kind': 'effect-lost',
 'signature': '937334532bab',
 'title': '[effects/effect-lost] call 0: args[1] members differs after the call',
 'tags': ['class-call', 'classes', 'subclass', 'subclass-plain', 'subclass-set'],
 'torch': '2.13.0+cpu',
 'python': '3.11.7',
 'backend': 'eager',
 'device': 'cpu',
 'fullgraph': False,
 'dynamic': None,
 'compiler': 'torch',
 'entry': 'f',
 'seed': 547,
 'families': [],
 'status': 'open',
 'upstream': None,
 'bucket_cheap': 'effects/lost-effect: set-subclass argument .add',
 'bucket': 'effects/lost-effect: set-subclass argument .add @dynamo',
 'cause': 'set-subclass argument .add: a write the eager call makes to program state is missing after the '
          'compiled call',
 'layer': 'dynamo'}

import sys
import types

import torch

PROGRAM = r'''
import torch

class a(set):
    pass

def f(x, b):
    b.add(0)
    c = x + len(b)

def inputs(device, call=0):
    return (torch.linspace(0.0, 0.0, 0, device=device), a({1, 1}))
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
assert set(c_args[1]) == set(args[1]), f"args[1] members: expected {set(args[1])!r}, got {set(c_args[1])!r}"
