"""[effects/effect-mismatch] call 0: state['M_0'] members differs after the call

torch 2.13.0+cpu, torch.compile(backend="eager"): exits 1 while the bug is present, 0 once fixed.
"""
DYNFUZZ = {'oracle': 'effects',
 'kind': 'effect-mismatch',
 'signature': '7d43232315e5',
 'title': "[effects/effect-mismatch] call 0: state['M_0'] members differs after the call",
 'tags': ['subclass', 'subclass-override', 'subclass-set'],
 'torch': '2.13.0+cpu',
 'python': '3.11.7',
 'backend': 'eager',
 'device': 'cpu',
 'fullgraph': False,
 'dynamic': None,
 'compiler': 'torch',
 'entry': 'f',
 'seed': 153,
 'families': [],
 'status': 'open',
 'upstream': None,
 'bucket_cheap': 'effects/wrong-effect: set-subclass global .add',
 'bucket': 'effects/wrong-effect: set-subclass global .add @dynamo',
 'cause': "set-subclass global .add: program state after the compiled call differs from eager's (written, "
          'but wrongly)',
 'layer': 'dynamo'}

import torch

PROGRAM = r'''
import torch

class MySet0(set):
    n = 0

    def add(self, v):
        self.n = self.n
        super().add(v)
M_0 = MySet0({1, 1})

def f(x):
    M_0.add(0)
    e0 = x + len(M_0)

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
assert set(c_ns['M_0']) == set(ns['M_0']), f"state['M_0'] members: expected {set(ns['M_0'])!r}, got {set(c_ns['M_0'])!r}"
