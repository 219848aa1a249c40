"""[effects/effect-mismatch] call 0: args[1] members differs after the call

torch 2.13.0+cpu, torch.compile(backend="eager"): exits 1 while the bug is present, 0 once fixed.
"""
DYNFUZZ = {'oracle': 'effects',
 'kind': 'effect-mismatch',
 'signature': 'e26fc552880d',
 'title': '[effects/effect-mismatch] call 0: args[1] members differs after the call',
 'tags': ['subclass', 'subclass-override', 'subclass-set'],
 'torch': '2.13.0+cpu',
 'python': '3.11.7',
 'backend': 'eager',
 'device': 'cpu',
 'fullgraph': False,
 'dynamic': None,
 'compiler': 'torch',
 'entry': 'f',
 'seed': 80,
 'families': [],
 'status': 'open',
 'upstream': None,
 'bucket_cheap': 'effects/wrong-effect: set-subclass argument .add',
 'bucket': 'effects/wrong-effect: set-subclass argument .add @dynamo',
 'cause': "set-subclass argument .add: program state after the compiled call differs from eager's (written, "
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

def f(x, m0):
    m0.add(0)
    e0 = x + len(m0)

def inputs(device, call=0):
    return (torch.linspace(0.0, 0.0, 0, device=device), MySet0({1, 1}))
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
assert set(c_args[1]) == set(args[1]), f"args[1] members: expected {set(args[1])!r}, got {set(c_args[1])!r}"
