"""[outputs/miscompile] `3 in a` on a list argument stays False once its ints are dynamic (pytorch/pytorch#153366)

torch 2.13.0+cpu, torch.compile(backend="eager"): exits 1 while the bug is present, 0 once fixed."""
DYNFUZZ = {'oracle': 'outputs',
 'kind': 'miscompile',
 'signature': 'ce342ae4cda3',
 'title': '[outputs/miscompile] call 1: out[0] values differ',
 'tags': ['plan-stdlib-operator-math', 'stdlib', 'stdlib-operator-math'],
 'torch': '2.13.0+cpu',
 'python': '3.11.7',
 'backend': 'eager',
 'device': 'cpu',
 'fullgraph': False,
 'dynamic': None,
 'compiler': 'torch',
 'entry': 'f',
 'seed': 1508,
 'families': [],
 'status': 'known',
 'upstream': 'https://github.com/pytorch/pytorch/issues/153366',
 'bucket_cheap': 'outputs/wrong-value: math.trunc on int expression after list argument changes',
 'bucket': 'outputs/wrong-value: operator.contains on list argument after list argument changes @dynamo',
 'cause': "operator.contains on list argument: an output's values differ from eager, once the call plan's "
          'change between calls (list argument changes) has run',
 'layer': 'dynamo'}

import torch

PROGRAM = r'''
import torch
import operator

def f(x, a):
    return (x + operator.contains(a, 3),)

def inputs(device, call=0):
    a = [3]
    if call == 0:
        a = [0]
    return (torch.linspace(0.0, 0.0, 1, device=device), a)
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
torch.testing.assert_close(c_out[0], out[0], equal_nan=True, msg=lambda m: "out[0] values: " + m)
