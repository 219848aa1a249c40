"""[outputs/miscompile] call 1: out values differ

Minimized by dynfuzz.
torch 2.13.0+cpu, torch.compile(backend="eager"): exits 1 while the bug is present, 0 once fixed."""
DYNFUZZ = {'oracle': 'outputs',
 'kind': 'miscompile',
 'signature': '8a7663680d45',
 'title': '[outputs/miscompile] call 1: out values differ',
 'tags': [],
 'torch': '2.13.0+cpu',
 'python': '3.11.7',
 'backend': 'eager',
 'device': 'cpu',
 'fullgraph': False,
 'dynamic': None,
 'compiler': 'torch',
 'entry': 'f',
 'seed': None,
 'families': [],
 'status': 'open',
 'upstream': None}

import sys
import types

import torch

PROGRAM = r'''
import torch

def make_pw0():
    v0 = {'n': 0}

    def bump(t):
        v0['n'] = v0['n'] + 1

    class Reader:

        def run(self, fn, t):
            fn(t)
            return t + v0['n']
    return (bump, Reader)
PW_WRITE0, PW_READER0 = make_pw0()

def f(x):
    return PW_READER0().run(PW_WRITE0, x)

def inputs(device, call=0):
    return (torch.linspace(0.0, 0.0, 1, device=device),)
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
torch.testing.assert_close(c_out, out, equal_nan=True, msg=lambda m: "out values: " + m)
