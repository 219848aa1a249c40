"""[outputs/miscompile] call 0: out[0] type differ

Minimized by dynfuzz.
torch 2.13.0+cpu, torch.export.export(strict=True) at the call's arguments, the exported graph run on them: exits 1 while the bug is present, 0 once fixed."""
DYNFUZZ = {'oracle': 'outputs',
 'kind': 'miscompile',
 'signature': '1aa074d93bcc',
 'title': '[outputs/miscompile] call 0: out[0] type differ',
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

import copy
import sys
import types

import torch

PROGRAM = r'''
import torch

def f(x):
    with torch.enable_grad():
        b = torch.linspace(0.0, 0.0, 1, device=x.device).requires_grad_()
        d = torch.autograd.grad(b.exp(), b)[0]
    return (d,)

def inputs(device, call=0):
    return (torch.linspace(0.0, 0.0, 0, device=device),)
COMPILE_OPTIONS = {'dynamic': True, 'export': 'strict', 'fullgraph': True}
DYNAMO_CONFIG = {'trace_autograd_ops': True}
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
    fn = torch._dynamo.config.patch(trace_autograd_ops=True)(exported(ns["f"], 'strict')) if compiled else ns["f"]
    args = ns["inputs"]("cpu", 0)
    out = fn(*args)
    return out, args, ns


out, args, ns = run(PROGRAM, compiled=False)
c_out, c_args, c_ns = run(PROGRAM, compiled=True)
assert type(c_out[0]).__name__ == type(out[0]).__name__, f"out[0] type: expected {type(out[0]).__name__!r}, got {type(c_out[0]).__name__!r}"
