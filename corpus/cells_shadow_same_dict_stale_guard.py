"""[effects/effect-lost] call 1: state['f'].<cells>.k1.cell_contents['n'] value differs after the call

Minimized by dynfuzz.
torch 2.13.0+cpu, torch.compile(backend="eager"): exits 1 while the bug is present, 0 once fixed."""
DYNFUZZ = {'oracle': 'effects',
 'kind': 'effect-lost',
 'signature': 'e3a104bf9ded',
 'title': "[effects/effect-lost] call 1: state['f'].<cells>.k1.cell_contents['n'] value differs after the "
          'call',
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
SHADOW1 = {'n': 0}

def make_sh1():
    k1 = SHADOW1

    def get(t):
        return t + k1['n']
    return get
SH_GET1 = make_sh1()

def make_f0():
    k1 = SHADOW1

    def f(x):
        nonlocal k1
        t1 = SH_GET1(x)
        k1 = {'n': k1['n'] + 1}
    return f
f = make_f0()

def inputs(device, call=0):
    return (torch.linspace(0.0, 0.0, 0, device=device),)
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
assert c_ns['f'].__closure__[c_ns['f'].__code__.co_freevars.index('k1')].cell_contents['n'] == ns['f'].__closure__[ns['f'].__code__.co_freevars.index('k1')].cell_contents['n'], f"state['f'].<cells>.k1.cell_contents['n'] value: expected {ns['f'].__closure__[ns['f'].__code__.co_freevars.index('k1')].cell_contents['n']!r}, got {c_ns['f'].__closure__[c_ns['f'].__code__.co_freevars.index('k1')].cell_contents['n']!r}"
