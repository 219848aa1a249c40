"""[effects/effect-lost] global set subclass: add() inside torch.compile is lost

Found by dynfuzz (campaign seed 0) and minimized. Eager leaves seen == Tags({0, 1}); compiled leaves Tags({0}). A plain set is fine.
torch 2.13.0+cpu, torch.compile(backend="eager"): exits 1 while the bug is present, 0 once fixed."""
DYNFUZZ = {'oracle': 'effects',
 'kind': 'effect-lost',
 'signature': 'db6871c6eba5',
 'title': '[effects/effect-lost] global set subclass: add() inside torch.compile is lost',
 'tags': ['set-subclass', 'global', 'container-mutation'],
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


seen = Tags({0})


def f(x):
    seen.add(1)  # under torch.compile this write to a global set subclass is lost
    return x + len(seen)


def inputs(device, call=0):
    return (torch.zeros(2, device=device),)
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
assert set(c_ns['seen']) == set(ns['seen']), f"state['seen'] members: expected {set(ns['seen'])!r}, got {set(c_ns['seen'])!r}"
