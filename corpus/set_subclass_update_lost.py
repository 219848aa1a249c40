"""[effects/effect-lost] set subclass argument: update() inside torch.compile is lost

Found by dynfuzz (campaign seed 0) and minimized. A plain `set` argument keeps the element;
a subclass of `set` does not: eager leaves Tags({0, 1}), compiled leaves Tags({1}).
torch 2.13.0+cpu, torch.compile(backend="eager"): exits 1 while the bug is present, 0 once fixed."""
DYNFUZZ = {'oracle': 'effects',
 'kind': 'effect-lost',
 'signature': '937334532bab',
 'title': '[effects/effect-lost] set subclass argument: update() inside torch.compile is lost',
 'tags': ['set-subclass', 'container-mutation', 'argument-mutation'],
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


class Tags(set):
    pass


def f(x, tags):
    tags.update({0})  # under torch.compile this write to a set-subclass argument is lost
    return x + len(tags)


def inputs(device, call=0):
    return (torch.zeros(2, device=device), Tags({1}))
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
assert set(c_args[1]) == set(args[1]), f"args[1] members: expected {set(args[1])!r}, got {set(c_args[1])!r}"
