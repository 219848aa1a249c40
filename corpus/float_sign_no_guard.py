"""[outputs/miscompile] no guard on a float argument's sign: 0.0 then -0.0 reuses the stale graph

Found by dynfuzz (torch 2.13 campaigns) and minimized by hand. math.copysign(1.0, s) with s=0.0 on call 0 and s=-0.0 on call 1: eager adds -1 on call 1,
compiled still adds +1 (0.0 == -0.0, so no recompile).
torch 2.13.0+cpu, torch.compile(backend="eager"): exits 1 while the bug is present, 0 once fixed."""
DYNFUZZ = {'oracle': 'outputs',
 'kind': 'miscompile',
 'signature': '9c0bc2b3c3fb',
 'title': "[outputs/miscompile] no guard on a float argument's sign: 0.0 then -0.0 reuses the stale graph",
 'tags': ['guard-probe', 'plan-call-plan-probe', 'probe-float-sign'],
 'torch': '2.13.0+cpu',
 'backend': 'eager',
 'device': 'cpu',
 'fullgraph': False,
 'compiler': 'torch',
 'entry': 'f',
 'seed': None,
 'families': [],
 'status': 'known',
 'upstream': None}

import torch

PROGRAM = r'''
import math

import torch


def f(x, s):
    return x + math.copysign(1.0, s)  # depends on the sign of s, also for 0.0 vs -0.0


def inputs(device, call=0):
    return (torch.zeros(2, device=device), -0.0 if call else 0.0)
'''


def run(source, compiled):
    ns = {"__name__": "repro"}
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
