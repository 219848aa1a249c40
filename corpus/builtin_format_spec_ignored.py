"""[outputs/miscompile] builtin format(value, spec) ignores the spec in a compiled frame: format(2, '03d') is '2'
Found by dynfuzz (stdlib family, torch 2.13 campaign, bucket "dict local .keys") and minimized by hand.
Eager returns x + 3 (len('002')); compiled returns x + 1. Also format(3.14159, '.2f') gives '3.14159'.
Cause: BuiltinVariable.call_format (variables/builtin.py) models the builtin `format(value, spec)` as
`str(value).format(spec)` (StringFormatVariable.create with the value as the format string), which drops the
spec. A frame with no tensor op is not compiled, which hides it: the repro adds one.
Status open: not yet searched upstream.
torch 2.13.0+cpu, torch.compile(backend="eager"): exits 1 while the bug is present, 0 once fixed."""
DYNFUZZ = {'oracle': 'outputs',
 'kind': 'miscompile',
 'signature': '409708ff9d8a',
 'title': '[outputs/miscompile] builtin format(value, spec) ignores the spec',
 'tags': ['stdlib', 'stdlib-builtins'],
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

CALLS = 1
PROGRAM = r'''
import torch


def f(x):
    return x + len(format(2, '03d'))


def inputs(device, call=0):
    return (torch.zeros(2, device=device),)
'''


def run(source, compiled, calls=1):
    ns = {"__name__": "repro"}
    exec(source, ns)
    fn = torch.compile(ns["f"], backend="eager") if compiled else ns["f"]
    for call in range(calls):
        args = ns["inputs"]("cpu", call)
        out = fn(*args)
    return out, args, ns


out, args, ns = run(PROGRAM, compiled=False, calls=CALLS)
c_out, c_args, c_ns = run(PROGRAM, compiled=True, calls=CALLS)
torch.testing.assert_close(c_out, out, equal_nan=True, msg=lambda m: "out values: " + m)
