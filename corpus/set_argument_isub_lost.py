"""[effects/effect-mismatch] call 0: args[1] members differs after the call

Minimized by dynfuzz.
torch 2.13.0+cpu, torch.compile(backend="eager"): exits 1 while the bug is present, 0 once fixed."""
DYNFUZZ = {'oracle': 'effects',
 'kind': 'effect-mismatch',
 'signature': '875b4bebd0b7',
 'title': '[effects/effect-mismatch] call 0: args[1] members differs after the call',
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

def f(x, s):
    s |= {0}
    s -= {1}
    return x + len(s)

def inputs(device, call=0):
    return (torch.linspace(0.0, 0.0, 0, device=device), {1, 1})
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
