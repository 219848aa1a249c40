"""[effects/effect-lost] call 0: state['b'][0] members differs after the call

torch 2.13.0+cpu, torch.compile(backend="eager"): exits 1 while the bug is present, 0 once fixed."""
DYNFUZZ = {'oracle': 'effects',
 'kind': 'effect-lost',
 'signature': 'e3e33fb3fb02',
 'title': "[effects/effect-lost] call 0: state['b'][0] members differs after the call",
 'tags': ['subclass', 'subclass-plain', 'subclass-set'],
 'torch': '2.13.0+cpu',
 'python': '3.11.7',
 'backend': 'eager',
 'device': 'cpu',
 'fullgraph': False,
 'dynamic': None,
 'compiler': 'torch',
 'entry': 'f',
 'seed': 452,
 'families': [],
 'status': 'open',
 'upstream': None,
 'bucket': 'effects/lost-effect: list global .append @dynamo',
 'cause': 'list global .append: a write the eager call makes to program state is missing after the compiled '
          'call',
 'layer': 'dynamo'}

import sys
import types

import torch

PROGRAM = r'''
import torch

class a(set):
    pass
b = []

def f(x):
    c = a({0, 0})
    d = x + len(c)
    b.append(c)

def inputs(device, call=0):
    return (torch.linspace(0.0, 0.0, 0, device=device),)
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
assert set(c_ns['b'][0]) == set(ns['b'][0]), f"state['b'][0] members: expected {set(ns['b'][0])!r}, got {set(c_ns['b'][0])!r}"
