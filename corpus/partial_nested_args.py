"""[outputs/miscompile] functools.partial(functools.partial(g, a), b).args is (b,) in the compiled frame, not (a, b)
Found by dynfuzz (stdlib family, torch 2.13 campaign, bucket "set local .add") and minimized by hand.
CPython flattens a partial of a partial (partial.__new__: args = inner.args + args, keywords merged, func =
inner.func), so eager sees p.args == (1, 3) and returns x + 2; compiled returns x + 1: Dynamo's
FunctoolsPartialVariable keeps the inner partial as `func` and reports only the outer args. Calling p is right.
Status open: not yet searched upstream.
torch 2.13.0+cpu, torch.compile(backend="eager"): exits 1 while the bug is present, 0 once fixed."""
DYNFUZZ = {'oracle': 'outputs',
 'kind': 'miscompile',
 'signature': '409708ff9d8a',
 'title': '[outputs/miscompile] args of a nested functools.partial not flattened',
 'tags': ['stdlib', 'stdlib-functools'],
 'torch': '2.13.0+cpu',
 'backend': 'eager',
 'device': 'cpu',
 'fullgraph': False,
 'compiler': 'torch',
 'entry': 'f',
 'seed': None,
 'families': ['stdlib'],
 'status': 'open',
 'upstream': None}

import torch

PROGRAM = r'''
import functools

import torch


def f(x):
    p = functools.partial(functools.partial(max, 1), 3)
    return x + len(p.args)


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
torch.testing.assert_close(c_out, out, equal_nan=True, msg=lambda m: "out values: " + m)
