"""[outputs/miscompile] a set subclass built in the compiled frame is returned empty

Found by dynfuzz (campaign seed 0) and minimized. Eager returns Tags({0}); compiled returns Tags() (members dropped on reconstruction).
torch 2.13.0+cpu, torch.compile(backend="eager"): exits 1 while the bug is present, 0 once fixed."""
DYNFUZZ = {'oracle': 'outputs',
 'kind': 'miscompile',
 'signature': '05229613a990',
 'title': '[outputs/miscompile] a set subclass built in the compiled frame is returned empty',
 'tags': ['set-subclass', 'sourceless-object'],
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
import torch


class Tags(set):
    pass


def f(x):
    tags = Tags({0})  # built inside the compiled frame and returned
    return x + len(tags), tags


def inputs(device, call=0):
    return (torch.zeros(2, device=device),)
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
assert set(c_out[1]) == set(out[1]), f"out[1] members: expected {set(out[1])!r}, got {set(c_out[1])!r}"
