"""[outputs/miscompile] a custom metaclass __call__ is skipped for an instance made in the frame

Found by dynfuzz (classes family, class-metaclass construct, torch 2.13 campaign) and minimized by hand.
`Meta.__call__` counts instances (`cls.made += 1`) before delegating to `type.__call__`. Eager runs it for
`C(2.0)`; compiled code builds the instance without it: the count read in the frame is stale (out is
x * 2 + 0 instead of x * 2 + 1) and the class attribute write is lost (C.made stays 0).
Upstream: pytorch/pytorch#184820 ("[dynamo] respect custom metaclass __call__ during class construction").
torch 2.13.0+cpu, torch.compile(backend="eager"): exits 1 while the bug is present, 0 once fixed."""
DYNFUZZ = {'oracle': 'outputs',
 'kind': 'miscompile',
 'signature': '409708ff9d8a',
 'title': '[outputs/miscompile] a custom metaclass __call__ is skipped for an instance made in the frame',
 'tags': ['classes', 'class-metaclass'],
 'torch': '2.13.0+cpu',
 'backend': 'eager',
 'device': 'cpu',
 'fullgraph': False,
 'compiler': 'torch',
 'entry': 'f',
 'seed': None,
 'families': ['classes'],
 'status': 'known',
 'upstream': 'https://github.com/pytorch/pytorch/pull/184820'}

import torch

PROGRAM = r'''
import torch


class Meta(type):
    def __call__(cls, *args):
        cls.made = cls.made + 1  # eager runs this for every C(...)
        return super().__call__(*args)


class C(metaclass=Meta):
    made = 0

    def __init__(self, w):
        self.w = w

    def measure(self, t):
        return t * self.w


def f(x):
    o = C(2.0)  # made inside the compiled frame
    return o.measure(x) + C.made


def inputs(device, call=0):
    return (torch.linspace(-1.0, 1.0, 3, device=device),)
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
torch.testing.assert_close(c_out, out, equal_nan=True, msg=lambda m: "out values: " + m)
assert c_ns["C"].made == ns["C"].made, f"C.made: expected {ns['C'].made}, got {c_ns['C'].made}"
