"""[exceptions/crash] bytearray argument: `c += b'...'` crashes Dynamo with InternalTorchDynamoError (RecursionError)

Found by dynfuzz (torch 2.13 campaign, 3 findings: 623853fff4a9, 759d4daa426c, c2ddbf960c13) and minimized by hand.
Eager appends to the bytearray in place; compiled raises InternalTorchDynamoError wrapping RecursionError
(maximum recursion depth exceeded). c.extend(b'...') and c.append(5) are traced correctly; a global bytearray
with `global C; C += b'...'` crashes the same way.
torch 2.13.0+cpu, torch.compile(backend="eager"): exits 1 while the bug is present, 0 once fixed."""
DYNFUZZ = {'oracle': 'exceptions',
 'kind': 'crash',
 'signature': '623853fff4a9',
 'title': "[exceptions/crash] bytearray argument: `c += b'...'` crashes Dynamo with InternalTorchDynamoError "
          '(RecursionError)',
 'tags': ['container-bytearray', 'via-augassign', 'where-arg'],
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


def f(x, c):
    c += b"\x05"  # in-place extend of a bytearray argument
    return x + 1


def inputs(device, call=0):
    return (torch.zeros(2, device=device), bytearray(b"\x02\x00"))
'''


def run(source, compiled):
    ns = {"__name__": "repro"}
    exec(source, ns)
    fn = torch.compile(ns["f"], backend="eager") if compiled else ns["f"]
    args = ns["inputs"]("cpu", 0)
    try:
        out = fn(*args)
    except Exception as e:
        out = e
    return out, args, ns


out, args, ns = run(PROGRAM, compiled=False)
c_out, c_args, c_ns = run(PROGRAM, compiled=True)
assert isinstance(c_out, Exception) == isinstance(out, Exception), f"compiled raised {c_out!r}; eager returned {out!r}"
