"""[outputs/miscompile] call 0: out values differ

Minimized by dynfuzz.
torch 2.13.0+cpu, torch._dynamo.export at the call's arguments, the exported graph run on them: exits 1 while the bug is present, 0 once fixed."""
DYNFUZZ = {'oracle': 'outputs',
 'kind': 'miscompile',
 'signature': '409708ff9d8a',
 'title': '[outputs/miscompile] call 0: out values differ',
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

class Net0(torch.nn.Module):

    def __init__(self, n):
        super().__init__()
        self.gain = torch.nn.Parameter(torch.ones(n))

    def forward(self, x):
        return x * self.gain
NET_0 = Net0(3)

def f(x):
    return torch.func.functional_call(NET_0, {'gain': torch.full((3,), 0.0)}, (x,))

def inputs(device, call=0):
    return (1.0,)
COMPILE_OPTIONS = {'export': 'dynamo'}
DYNAMO_CONFIG = {'install_free_tensors_for_export': False}
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
    fn = torch._dynamo.config.patch(install_free_tensors_for_export=False)(exported(ns["f"], 'dynamo')) if compiled else ns["f"]
    args = ns["inputs"]("cpu", 0)
    out = fn(*args)
    return out, args, ns


out, args, ns = run(PROGRAM, compiled=False)
c_out, c_args, c_ns = run(PROGRAM, compiled=True)
torch.testing.assert_close(c_out, out, equal_nan=True, msg=lambda m: "out values: " + m)
