"""[outputs/miscompile] call 0: out[0] values differ

torch 2.13.0+cpu, torch.compile(backend="eager"): exits 1 while the bug is present, 0 once fixed."""
DYNFUZZ = {'oracle': 'outputs',
 'kind': 'miscompile',
 'signature': '9dd5c2435a79',
 'title': '[outputs/miscompile] call 0: out[0] values differ',
 'tags': ['class-metaclass', 'class-mro', 'classes', 'closure-arg', 'pointwise', 'preexisting-closure'],
 'torch': '2.13.0+cpu',
 'python': '3.11.7',
 'backend': 'eager',
 'device': 'cpu',
 'fullgraph': False,
 'dynamic': None,
 'compiler': 'torch',
 'entry': 'f',
 'seed': 4,
 'families': [],
 'status': 'open',
 'upstream': None,
 'bucket_cheap': 'outputs/wrong-value: object argument .bump',
 'bucket': 'outputs/wrong-value: object new .measure @dynamo',
 'cause': "object new .measure: an output's values differ from eager",
 'layer': 'dynamo'}

import torch

PROGRAM = r'''
import torch

class Root0:

    def g(self, t):
        pass

class MixA0(Root0):
    pass

class MixB0(Root0):
    pass

class Tool0:
    pass

class Multi0(Tool0, MixB0, MixA0):
    pass
MRO_0 = Multi0()

def make_pc0(k):

    def closure(t):
        pass

    def setter(v):
        pass
    return (closure, setter)
PC0, SET_PC0 = make_pc0(0.5)

class Meta0(type):

    def __new__(mcs, name, bases, ns):
        ns.setdefault('tag', len(name))
        return super().__new__(mcs, name, bases, ns)

    def __call__(cls, *args):
        cls.made = 1
        return super().__call__(*args)

class Metered0(metaclass=Meta0):
    made = 0

    def __init__(self, w):
        self.w = w

    def measure(self, t):
        return t

def f(x):
    k1 = Metered0(0.5).measure(x) + Metered0.tag % 3 + Metered0.made % 4
    return (k1,)

def inputs(device, call=0):
    return (torch.linspace(-1.0, 1.0, 4, device=device),)
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
