"""[effects/effect-lost] deleting and re-adding an attribute of an argument: vars() order is lost

Found by dynfuzz's order-state construct (issue 14) and minimized by hand. Eager leaves vars(o) as
{'b': 2, 'a': 3}: `del o.a; o.a = 3` moves `a` to the end. Compiled replays only the final `setattr`,
so `a` keeps its old place: {'a': 3, 'b': 2}. A global object of a user class loses the order the same
way; a types.SimpleNamespace keeps it.
torch 2.13.0+cpu, torch.compile(backend="eager"): exits 1 while the bug is present, 0 once fixed."""
DYNFUZZ = {'oracle': 'effects',
 'kind': 'effect-lost',
 'signature': 'f591c658b257',
 'title': '[effects/effect-lost] deleting and re-adding an attribute of an argument: vars() order is lost',
 'tags': ['order-attr', 'order-readd', 'order-state', 'where-arg'],
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
import torch


class Obj:

    def __init__(self):
        self.a = 1
        self.b = 2


def f(x, o):
    del o.a
    o.a = 3  # eager: vars(o) is now {'b': 2, 'a': 3}
    return x + 1


def inputs(device, call=0):
    return (torch.zeros(2, device=device), Obj())
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
assert list(vars(c_args[1])) == list(vars(args[1])), f"args[1] attribute-order: expected {list(vars(args[1]))!r}, got {list(vars(c_args[1]))!r}"
