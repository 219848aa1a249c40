"""[exceptions/spurious-exception] fullgraph: cond branch closing over a float from .item(): AssertionError in cond's fake-tensor check

Found by dynfuzz (conds family, torch 2.13 campaigns) and minimized by hand. Compiled raises TorchRuntimeError wrapping AssertionError '... can only be of (Tensor, int, SymInt) but got (FakeTensor, SymFloat)' when a cond branch closes over a float from .item() under fullgraph; eager (torch.cond as a plain if) returns x + max(x).
torch 2.13.0+cpu, torch.compile(backend="eager", fullgraph=True): exits 1 while the bug is present, 0 once fixed."""
DYNFUZZ = {'oracle': 'exceptions',
 'kind': 'spurious-exception',
 'signature': 'c1f82645ab7d',
 'title': '[exceptions/spurious-exception] fullgraph: cond branch closing over a float from .item(): '
          "AssertionError in cond's fake-tensor check",
 'tags': ['cond', 'capture-unbacked', 'unbacked-float', 'fullgraph', 'pred-tensor', 'branch-lambda'],
 'torch': '2.13.0+cpu',
 'backend': 'eager',
 'device': 'cpu',
 'fullgraph': True,
 'compiler': 'torch',
 'entry': 'f',
 'seed': None,
 'families': ['conds'],
 'status': 'known',
 'upstream': None}

import sys
import types

import torch

PROGRAM = r'''
import torch


def f(x):
    c = x.max().item()  # a float read from the tensor, closed over by a branch
    return torch.cond(x.sum() > 0, lambda a: a + c, lambda a: a - 1, (x,))


def inputs(device, call=0):
    return (torch.linspace(-1.0, 1.0, 4, device=device),)


COMPILE_OPTIONS = {"fullgraph": True}
'''
EAGER_PROGRAM = r'''
import torch


def f(x):
    c = x.max().item()  # a float read from the tensor, closed over by a branch
    return (lambda a: a + c)(x) if bool(x.sum() > 0) else (lambda a: a - 1)(x)


def inputs(device, call=0):
    return (torch.linspace(-1.0, 1.0, 4, device=device),)


COMPILE_OPTIONS = {"fullgraph": True}
'''  # the plain-Python rendering eager runs


def run(source, compiled):
    module = types.ModuleType(f"repro_{'compiled' if compiled else 'eager'}")  # Dynamo imports it for cond
    sys.modules[module.__name__] = module
    ns = vars(module)
    exec(source, ns)
    fn = torch.compile(ns["f"], backend="eager", fullgraph=True) if compiled else ns["f"]
    args = ns["inputs"]("cpu", 0)
    try:
        out = fn(*args)
    except Exception as e:
        out = e
    return out, args, ns


out, args, ns = run(EAGER_PROGRAM, compiled=False)
c_out, c_args, c_ns = run(PROGRAM, compiled=True)
assert isinstance(c_out, Exception) == isinstance(out, Exception), f"compiled raised {c_out!r}; eager returned {out!r}"
