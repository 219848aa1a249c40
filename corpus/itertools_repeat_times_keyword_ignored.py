"""[outputs/miscompile] itertools.repeat(v, times=n) with `times` by keyword repeats forever in the compiled frame
Found by dynfuzz (stdlib family, torch 2.13 campaign: a case with `list(itertools.repeat(1, times=2))` hung past
the 300 s case timeout) and minimized by hand.
Eager returns x + 5 (repeat(5, times=1) yields 5 once); compiled returns x + 15: islice takes three 5s. Without
islice, `list(itertools.repeat(1, times=2))` makes Dynamo trace forever (memory grows until the case is killed).
Cause: IteratorVariable.call_function (variables/iter.py) builds RepeatIteratorVariable whenever fewer than two
*positional* arguments are given, dropping kwargs; RepeatIteratorVariable has no `times` ("TODO(dynamo-team):
Missing `times` argument handling"). `itertools.repeat(5, 1)` goes through polyfills.repeat and is right.
Status open: not yet searched upstream.
torch 2.13.0+cpu, torch.compile(backend="eager"): exits 1 while the bug is present, 0 once fixed."""
DYNFUZZ = {'oracle': 'outputs',
 'kind': 'miscompile',
 'signature': '409708ff9d8a',
 'title': '[outputs/miscompile] itertools.repeat(v, times=n) with times by keyword repeats forever',
 'tags': ['stdlib', 'stdlib-itertools'],
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
import itertools

import torch


def f(x):
    return x + sum(itertools.islice(itertools.repeat(5, times=1), 3))


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
