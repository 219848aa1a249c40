"""[outputs/miscompile] in-place t_() on a tensor made in the frame: stale stride and is_contiguous

Found by dynfuzz (torch 2.13 campaigns) and minimized by hand. After w = y.abs(); w.t_() eager reports stride (1, 3), not contiguous; compiled reports the
pre-transpose (3, 1), contiguous (also with fullgraph=True). unsqueeze_ on such a tensor leaves a stale shape the same way.
torch 2.13.0+cpu, torch.compile(backend="eager"): exits 1 while the bug is present, 0 once fixed."""
DYNFUZZ = {'oracle': 'outputs',
 'kind': 'miscompile',
 'signature': '343689d54729',
 'title': '[outputs/miscompile] in-place t_() on a tensor made in the frame: stale stride and is_contiguous',
 'tags': ['metadata-mutation', 't_', 'intermediate'],
 'torch': '2.13.0+cpu',
 'backend': 'eager',
 'device': 'cpu',
 'fullgraph': False,
 'compiler': 'torch',
 'entry': 'f',
 'seed': None,
 'families': [],
 'status': 'known',
 'upstream': None}

import torch

PROGRAM = r'''
import torch


def f(y):
    w = y.abs()
    w.t_()  # in-place transpose of a tensor created inside the compiled frame
    return w.stride(), w.is_contiguous()


def inputs(device, call=0):
    return (torch.linspace(-1.0, 1.0, 6, device=device).reshape(2, 3),)
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
assert c_out[0][0] == out[0][0], f"out[0][0] value: expected {out[0][0]!r}, got {c_out[0][0]!r}"
