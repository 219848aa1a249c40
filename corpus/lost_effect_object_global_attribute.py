"""[effects/effect-lost] call 0: state['c'] attribute-order differs after the call

torch 2.13.0+cpu, torch.compile(backend="eager"): exits 1 while the bug is present, 0 once fixed.
"""
DYNFUZZ = {'oracle': 'effects',
 'kind': 'effect-lost',
 'signature': '9873d2ab879f',
 'title': "[effects/effect-lost] call 0: state['c'] attribute-order differs after the call",
 'tags': ['order-reinsert', 'order-state', 'where-global'],
 'torch': '2.13.0+cpu',
 'python': '3.11.7',
 'backend': 'eager',
 'device': 'cpu',
 'fullgraph': False,
 'dynamic': None,
 'compiler': 'torch',
 'entry': 'f',
 'seed': 76,
 'families': [],
 'status': 'open',
 'upstream': None,
 'bucket_cheap': 'effects/lost-effect: object global attribute =',
 'bucket': 'effects/lost-effect: object global attribute = @dynamo',
 'cause': 'object global attribute =: a write the eager call makes to program state is missing after the '
          'compiled call',
 'layer': 'dynamo'}

import torch

PROGRAM = r'''
import torch

class b:

    def __init__(e, a):
        e.a = a
        e.b = 0
c = b(0)

def f(x):
    del c.a
    c.a = 0
    d = x + c.a

def inputs(device, call=0):
    return (torch.linspace(0.0, 0.0, 0, device=device),)
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
assert list(vars(c_ns['c'])) == list(vars(ns['c'])), f"state['c'] attribute-order: expected {list(vars(ns['c']))!r}, got {list(vars(c_ns['c']))!r}"
