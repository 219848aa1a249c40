"""[outputs/miscompile] call 0: out[0] value differ

torch 2.13.0+cpu, torch.compile(backend="eager"): exits 1 while the bug is present, 0 once fixed."""
DYNFUZZ = {'oracle': 'outputs',
 'kind': 'miscompile',
 'signature': '1240a41f07b9',
 'title': '[outputs/miscompile] call 0: out[0] value differ',
 'tags': ['class-call',
          'classes',
          'metadata-op',
          'read-contiguous',
          'read-shape',
          'target-intermediate',
          'unsqueeze_'],
 'torch': '2.13.0+cpu',
 'python': '3.11.7',
 'backend': 'eager',
 'device': 'cpu',
 'fullgraph': False,
 'dynamic': None,
 'compiler': 'torch',
 'entry': 'f',
 'seed': 113,
 'families': [],
 'status': 'open',
 'upstream': None,
 'bucket_cheap': 'outputs/wrong-value: ordereddict expression .popitem',
 'bucket': 'outputs/wrong-value: tensor local .unsqueeze_ @dynamo',
 'cause': "tensor local .unsqueeze_: an output's values differ from eager",
 'layer': 'dynamo'}

import torch

PROGRAM = r'''
import torch

def f(x):
    c = torch.sin(x)
    c.unsqueeze_(0)
    return (c.shape[0],)

def inputs(device, call=0):
    return (torch.linspace(0.0, 0.0, 0, device=device),)
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
assert c_out[0] == out[0], f"out[0] value: expected {out[0]!r}, got {c_out[0]!r}"
