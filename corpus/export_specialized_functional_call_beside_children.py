"""[outputs/miscompile] call 0: out[2] values differ

torch 2.13.0+cpu, torch._dynamo.export at the call's arguments, the exported graph run on them: exits 1 while the bug is present, 0 once fixed."""
DYNFUZZ = {'oracle': 'outputs',
 'kind': 'miscompile',
 'signature': '9dd5c2435a79',
 'title': '[outputs/miscompile] call 0: out[2] values differ',
 'tags': ['class-call', 'classes', 'export', 'func-functional-call', 'nn-export-specialized'],
 'torch': '2.13.0+cpu',
 'python': '3.11.7',
 'backend': 'eager',
 'device': 'cpu',
 'fullgraph': False,
 'dynamic': None,
 'compiler': 'torch',
 'entry': 'f',
 'seed': 234,
 'families': [],
 'status': 'open',
 'upstream': None,
 'bucket_cheap': 'outputs/wrong-value: dict local .values',
 'bucket': 'outputs/wrong-value: module global .children under config.install_free_tensors_for_export=False, '
           "export='dynamo' @dynamo",
 'cause': "module global .children under config.install_free_tensors_for_export=False, export='dynamo': an "
          "output's values differ from eager",
 'layer': 'dynamo'}

import copy
import sys
import types

import torch

PROGRAM = r'''
import torch

class Affine0:

    def __init__(self, w):
        pass

    def __call__(self, t, k=1.0):
        pass

class Net0(torch.nn.Module):

    def __init__(self, n):
        super().__init__()
        self.gain = torch.nn.Parameter(torch.ones(n))

    def forward(self, x):
        x = x * self.gain
        return x
FC_0 = Net0(4)

class Holder0(torch.nn.Module):

    def __init__(self, n):
        super().__init__()
        self.register_buffer('shift', torch.linspace(0.0, 1.0, n))

    def forward(self, x):
        return x + self.shift
SPEC_0 = Holder0(4)

def f(x):
    k0 = Affine0(2.0)(x)
    return (k0, k0, torch.tanh(torch.func.functional_call(FC_0, {'gain': torch.linspace(0.5, 1.5, 4, device=x.device)}, (torch.tanh(x),))), torch.tanh(SPEC_0(torch.tanh(x))) + torch.tanh(torch.tanh(x) * len(list(SPEC_0.children())) + len(list(SPEC_0.modules()))))

def inputs(device, call=0):
    x = torch.linspace(-1.0, 1.0, 16, device=device).reshape(4, 4)
    return (x,)
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
torch.testing.assert_close(c_out[2], out[2], equal_nan=True, msg=lambda m: "out[2] values: " + m)
