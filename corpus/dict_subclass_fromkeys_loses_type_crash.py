"""[exceptions/spurious-exception] dict-subclass .fromkeys in the frame returns a plain dict: AttributeError

Found by dynfuzz (classes family, class-builtin-subclass construct, torch 2.13 campaign seed 6) and minimized
by hand. `MyDict.fromkeys(keys, v)` made inside the compiled frame is built as a plain `dict`, so calling a
method of the subclass on it raises AttributeError ('dict' object has no attribute 'pick'); eager runs.
Without the method call the type is silently lost (type(d) is dict under compile).
Upstream: pytorch/pytorch#177650 and #184757 (dict subclass fromkeys in Dynamo).
torch 2.13.0+cpu, torch.compile(backend="eager"): exits 1 while the bug is present, 0 once fixed."""
DYNFUZZ = {'oracle': 'exceptions',
 'kind': 'spurious-exception',
 'signature': '50bf8a2850a2',
 'title': '[exceptions/spurious-exception] dict-subclass .fromkeys in the frame returns a plain dict: AttributeError',
 'tags': ['classes', 'class-builtin-subclass'],
 'torch': '2.13.0+cpu',
 'backend': 'eager',
 'device': 'cpu',
 'fullgraph': False,
 'compiler': 'torch',
 'entry': 'f',
 'seed': None,
 'families': ['classes'],
 'status': 'known',
 'upstream': 'https://github.com/pytorch/pytorch/pull/184757'}

import torch

PROGRAM = r'''
import torch


class MyDict(dict):
    def pick(self, *keys):
        return sum(self[k] for k in keys)


def f(x):
    d = MyDict.fromkeys(("a", "b"), 0.5)  # a MyDict in eager, a plain dict under compile
    return x * d.pick("a", "b")


def inputs(device, call=0):
    return (torch.linspace(-1.0, 1.0, 3, device=device),)
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
