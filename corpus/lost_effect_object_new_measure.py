"""[effects/effect-lost] call 0: state['Metered0'].made value differs after the call

torch 2.13.0+cpu, torch.compile(backend="eager"): exits 1 while the bug is present, 0 once fixed."""
DYNFUZZ = {'oracle': 'effects',
 'kind': 'effect-lost',
 'signature': '472a8671c7bd',
 'title': "[effects/effect-lost] call 0: state['Metered0'].made value differs after the call",
 'tags': ['class-metaclass', 'classes'],
 'torch': '2.13.0+cpu',
 'python': '3.11.7',
 'backend': 'eager',
 'device': 'cpu',
 'fullgraph': False,
 'dynamic': None,
 'compiler': 'torch',
 'entry': 'f',
 'seed': 30,
 'families': [],
 'status': 'open',
 'upstream': None,
 'bucket_cheap': 'effects/lost-effect: dict local .get',
 'bucket': 'effects/lost-effect: object new .measure @dynamo',
 'cause': 'object new .measure: a write the eager call makes to program state is missing after the compiled '
          'call',
 'layer': 'dynamo'}

import sys
import types

import torch

PROGRAM = r'''
import torch

class Meta0(type):

    def __call__(cls, *args):
        cls.made = 1
        return super().__call__(*args)

class Metered0(metaclass=Meta0):
    made = 0

    def __init__(self, w):
        pass

    def measure(self, t):
        return torch.tanh(t)

def f(x):
    k0 = Metered0(0.0).measure(x)

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
assert c_ns['Metered0'].made == ns['Metered0'].made, f"state['Metered0'].made value: expected {ns['Metered0'].made!r}, got {c_ns['Metered0'].made!r}"
