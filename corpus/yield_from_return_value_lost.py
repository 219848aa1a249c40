"""[exceptions/spurious-exception] call 0: compiled raised TorchRuntimeError, eager did not

Minimized by dynfuzz. `r = yield from gen()` reads None instead of the inner generator's return
value (upstream pytorch/pytorch#149037, fix proposed in #185769).
torch 2.13.0+cpu, torch.compile(backend="eager"): exits 1 while the bug is present, 0 once fixed."""
DYNFUZZ = {'oracle': 'exceptions',
 'kind': 'spurious-exception',
 'signature': '69eeec286ba2',
 'title': '[exceptions/spurious-exception] call 0: compiled raised TorchRuntimeError, eager did not',
 'tags': ['generator', 'syntax'],
 'torch': '2.13.0+cpu',
 'python': '3.11.7',
 'backend': 'eager',
 'device': 'cpu',
 'fullgraph': False,
 'dynamic': None,
 'compiler': 'torch',
 'entry': 'f',
 'seed': 33,
 'families': ['syntax'],
 'status': 'known',
 'upstream': 'https://github.com/pytorch/pytorch/issues/149037'}

import torch

PROGRAM = r'''
import torch

def e(t, n):
    for i in range(n):
        yield t
    return n

def g(t):
    yield t
    yield (t - (yield from e(t, 2)))

def f(x):
    a, b, c, d = g(x)

def inputs(device, call=0):
    return (torch.linspace(0.0, 0.0, 0, device=device),)
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
