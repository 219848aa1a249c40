"""[exceptions/spurious-exception] call 0: compiled raised KeyError, eager did not

Minimized by dynfuzz.
torch 2.13.0+cpu, torch.export.export(strict=True) at the call's arguments, the exported graph run on them: exits 1 while the bug is present, 0 once fixed."""
DYNFUZZ = {'oracle': 'exceptions',
 'kind': 'spurious-exception',
 'signature': 'bfb86a33eea7',
 'title': '[exceptions/spurious-exception] call 0: compiled raised KeyError, eager did not',
 'tags': ['classes', 'export', 'nn-containers'],
 'torch': '2.13.0+cpu',
 'python': '3.11.7',
 'backend': 'eager',
 'device': 'cpu',
 'fullgraph': False,
 'dynamic': None,
 'compiler': 'torch',
 'entry': 'f',
 'seed': 3000118,
 'families': ['export'],
 'status': 'open',
 'upstream': None}

import copy
import sys
import types

import torch

PROGRAM = r'''
import torch

class Holder0(torch.nn.Module):

    def __init__(self, n):
        super().__init__()
        self.layers = [torch.nn.Linear(n, n) for _ in range(1)]
HOLDER_0 = Holder0(4)

def f(x):
    k0 = next(iter(HOLDER_0.layers))(x)

def inputs(device, call=0):
    return (torch.linspace(0.0, 0.0, 4, device=device),)
COMPILE_OPTIONS = {'export': 'strict'}
'''


def exported(fn, mode):  # fn exported at each call's arguments ("strict": torch.export; else torch._dynamo.export)
    def call(*args):
        try:  # torch._dynamo.export runs fn once: side effects on its arguments land on a copy
            example = copy.deepcopy(args)
        except Exception:
            example = args
        if mode == "strict":
            class Entry(torch.nn.Module):
                def forward(self, *a):
                    return fn(*a)

            return torch.export.export(Entry(), example, strict=True).module()(*args)
        return torch._dynamo.export(fn, aten_graph=mode == "dynamo-aten")(*example).graph_module(*args)

    return call


def run(source, compiled):
    ns = vars(sys.modules.setdefault(f"repro_{compiled}", types.ModuleType(f"repro_{compiled}")))
    exec(source, ns)
    fn = exported(ns["f"], 'strict') if compiled else ns["f"]
    args = ns["inputs"]("cpu", 0)
    try:
        out = fn(*args)
    except Exception as e:
        out = e
    return out, args, ns


out, args, ns = run(PROGRAM, compiled=False)
c_out, c_args, c_ns = run(PROGRAM, compiled=True)
assert isinstance(c_out, Exception) == isinstance(out, Exception), f"compiled raised {c_out!r}; eager returned {out!r}"
