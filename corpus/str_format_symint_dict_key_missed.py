"""[outputs/miscompile] dict.get with a key built by str.format from a dynamic int returns the default
Found by dynfuzz (stdlib family, torch 2.13 campaign, bucket "dict local .get after int argument changes") and
minimized by hand.
Call 0 (n=3) agrees; call 1 (n=1) recompiles with n dynamic (automatic dynamic), and d.get('{}x{}'.format(n, 2), 8)
returns 8 in the compiled frame while eager finds '1x2' and returns 4 (call 2, n=2, likewise 8 instead of 5).
The formatted string itself is right (len() of it agrees): the lookup of a not-yet-formatted string
(StringFormatVariable over a SymInt) in a constant-keyed dict misses instead of guarding or breaking the graph.
Status open: not yet searched upstream.
torch 2.13.0+cpu, torch.compile(backend="eager"): exits 1 while the bug is present, 0 once fixed."""
DYNFUZZ = {'oracle': 'outputs',
 'kind': 'miscompile',
 'signature': '8a7663680d45',
 'title': '[outputs/miscompile] dict.get(str.format(dynamic int)) returns the default',
 'tags': ['stdlib', 'stdlib-enum-str'],
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

CALLS = 2
PROGRAM = r'''
import torch


def f(x, n):
    d = {'1x2': 4, '2x2': 5}
    return x + d.get('{}x{}'.format(n, 2), 8)


def inputs(device, call=0):
    return (torch.zeros(2, device=device), 3 if call == 0 else 1)
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
