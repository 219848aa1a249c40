"""[effects/effect-lost] OrderedDict argument: move_to_end() inside torch.compile is lost

Found by dynfuzz's order-state construct (issue 14) and minimized by hand. Eager leaves the argument as
OrderedDict([('b', 2), ('a', 1)]); compiled leaves it unchanged, OrderedDict([('a', 1), ('b', 2)]): the
only mutation is a reordering, and it is not replayed.
torch 2.13.0+cpu, torch.compile(backend="eager"): exits 1 while the bug is present, 0 once fixed."""
DYNFUZZ = {'oracle': 'effects',
 'kind': 'effect-lost',
 'signature': 'e6c86c6277a4',
 'title': '[effects/effect-lost] OrderedDict argument: move_to_end() inside torch.compile is lost',
 'tags': ['order-dict', 'order-move', 'order-odict', 'order-state', 'where-arg'],
 'torch': '2.13.0+cpu',
 'python': '3.11.7',
 'backend': 'eager',
 'device': 'cpu',
 'fullgraph': False,
 'dynamic': None,
 'compiler': 'torch',
 'entry': 'f',
 'seed': None,
 'families': ['effects'],
 'status': 'known',
 'upstream': None}

import torch

PROGRAM = r'''
import collections

import torch


def f(x, d):
    d.move_to_end('a')  # eager: OrderedDict([('b', 2), ('a', 1)])
    return x + 1


def inputs(device, call=0):
    return (torch.zeros(2, device=device), collections.OrderedDict([('a', 1), ('b', 2)]))
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
assert list(c_args[1]) == list(args[1]), f"args[1] keys: expected {list(args[1])!r}, got {list(c_args[1])!r}"
