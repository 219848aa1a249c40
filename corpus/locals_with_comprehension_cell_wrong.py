"""[outputs/miscompile] call 0: out values differ

Minimized by dynfuzz. `locals()` in a frame where a comprehension closes over a local: the compiled
`locals()` misses the user's locals (`'s0' in locals()` is False; with a graph break in the comprehension
it even lists Dynamo's temporaries such as `tmp_2`). Found by the syntax family (introspection); not
reported upstream yet.
torch 2.13.0+cpu, torch.compile(backend="eager"): exits 1 while the bug is present, 0 once fixed."""
DYNFUZZ = {'oracle': 'outputs',
 'kind': 'miscompile',
 'signature': '409708ff9d8a',
 'title': '[outputs/miscompile] call 0: out values differ',
 'tags': ['introspection', 'syntax'],
 'torch': '2.13.0+cpu',
 'python': '3.11.7',
 'backend': 'eager',
 'device': 'cpu',
 'fullgraph': False,
 'dynamic': None,
 'compiler': 'torch',
 'entry': 'f',
 'seed': None,
 'families': ['syntax'],
 'status': 'open',
 'upstream': None}

import torch

PROGRAM = r'''
import torch

def f(x):
    s0 = x
    k1 = s0 + ('s0' in locals())
    k4 = [k1 for i in range(0)]
    return k1

def inputs(device, call=0):
    return (torch.linspace(0.0, 0.0, 1, device=device),)
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
torch.testing.assert_close(c_out, out, equal_nan=True, msg=lambda m: "out values: " + m)
