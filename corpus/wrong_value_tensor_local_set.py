"""[outputs/miscompile] call 0: out[0] value differ

torch 2.13.0+cpu, torch.compile(backend="eager"): exits 1 while the bug is present, 0 once fixed."""
DYNFUZZ = {'oracle': 'outputs',
 'kind': 'miscompile',
 'signature': '1240a41f07b9',
 'title': '[outputs/miscompile] call 0: out[0] value differ',
 'tags': ['metadata-op', 'read-shape', 'set_', 'target-intermediate'],
 'torch': '2.13.0+cpu',
 'python': '3.11.7',
 'backend': 'eager',
 'device': 'cpu',
 'fullgraph': False,
 'dynamic': None,
 'compiler': 'torch',
 'entry': 'f',
 'seed': 580,
 'families': [],
 'status': 'open',
 'upstream': None,
 'bucket_cheap': 'outputs/wrong-value: tensor cell .as_strided_',
 'bucket': 'outputs/wrong-value: tensor local .set_ @dynamo',
 'cause': "tensor local .set_: an output's values differ from eager",
 'layer': 'dynamo'}

import sys
import types

import torch

PROGRAM = r'''
import torch

def f(x):
    a = torch.sin(x)
    a.set_()
    return (a.shape[0],)

def inputs(device, call=0):
    return (torch.linspace(0.0, 0.0, 1, device=device),)
'''


def run(source, compiled):
    ns = vars(sys.modules.setdefault(f"repro_{compiled}", types.ModuleType(f"repro_{compiled}")))
    exec(source, ns)
    fn = torch.compile(ns["f"], backend="eager") if compiled else ns["f"]
    args = ns["inputs"]("cpu", 0)
    out = fn(*args)
    return out, args, ns


out, args, ns = run(PROGRAM, compiled=False)
c_out, c_args, c_ns = run(PROGRAM, compiled=True)
assert c_out[0] == out[0], f"out[0] value: expected {out[0]!r}, got {c_out[0]!r}"
