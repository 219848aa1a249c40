"""[outputs/miscompile] call 0: out[0] value, values differ

torch 2.13.0+cpu, torch.compile(backend="eager"): exits 1 while the bug is present, 0 once fixed."""
DYNFUZZ = {'oracle': 'outputs',
 'kind': 'miscompile',
 'signature': 'f5b187d7154b',
 'title': '[outputs/miscompile] call 0: out[0] value, values differ',
 'tags': ['class-call', 'classes', 'metadata-op', 'pointwise', 'read-shape', 'target-view', 'transpose_'],
 'torch': '2.13.0+cpu',
 'python': '3.11.7',
 'backend': 'eager',
 'device': 'cpu',
 'fullgraph': False,
 'dynamic': None,
 'compiler': 'torch',
 'entry': 'f',
 'seed': 41,
 'families': [],
 'status': 'open',
 'upstream': None,
 'bucket_cheap': 'outputs/wrong-value: object argument .measure',
 'bucket': 'outputs/wrong-value: tensor local .transpose_ @dynamo',
 'cause': "tensor local .transpose_: an output's values differ from eager",
 'layer': 'dynamo'}

import torch

PROGRAM = r'''
import torch

def f(x):
    c = x[1:]
    c.transpose_(0, 1)
    d = c.shape[0]
    return (x * d, d)

def inputs(device, call=0):
    return (torch.linspace(0.0, 1.0, 12, device=device).reshape(2, 2, 3),)
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
torch.testing.assert_close(c_out[0], out[0], equal_nan=True, msg=lambda m: "out[0] values: " + m)
