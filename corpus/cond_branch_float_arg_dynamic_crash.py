"""[exceptions/crash] dynamic=True: cond branch closing over a float argument: AssertionError lift_tracked_freevar_to_input on root SubgraphTracer

Found by dynfuzz (torch 2.13 campaign, findings c2dbf3e7a08f and 5af9463fd2c4: there the float comes from .item()
before a graph break and becomes an input of the resume function) and minimized by hand. Compiled raises
AssertionError 'lift_tracked_freevar_to_input should not be called on root SubgraphTracer'; eager returns x * u.
With an operand that requires grad the same program raises UncapturedHigherOrderOpError ('Data dependent operator')
instead. Static shapes (dynamic=None, first call) trace it fine; related: corpus/cond_branch_item_float_crash.py.
torch 2.13.0+cpu, torch.compile(backend="eager", dynamic=True): exits 1 while the bug is present, 0 once fixed."""
DYNFUZZ = {'oracle': 'exceptions',
 'kind': 'crash',
 'signature': 'c2dbf3e7a08f',
 'title': '[exceptions/crash] dynamic=True: cond branch closing over a float argument: AssertionError '
          'lift_tracked_freevar_to_input on root SubgraphTracer',
 'tags': ['cond', 'dynamic', 'branch-lambda', 'pred-tensor'],
 'torch': '2.13.0+cpu',
 'backend': 'eager',
 'device': 'cpu',
 'fullgraph': False,
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


def f(x, u):
    return torch.cond(x.sum() > 0, lambda a: a * u, lambda a: a + u, (x,))  # branches close over the float u


def inputs(device, call=0):
    return (torch.ones(3, device=device), 0.5)


COMPILE_OPTIONS = {"dynamic": True}
'''
EAGER_PROGRAM = r'''
import torch


def f(x, u):
    return (lambda a: a * u)(x) if bool(x.sum() > 0) else (lambda a: a + u)(x)


def inputs(device, call=0):
    return (torch.ones(3, device=device), 0.5)


COMPILE_OPTIONS = {"dynamic": True}
'''  # the plain-Python rendering eager runs


def run(source, compiled):
    module = types.ModuleType(f"repro_{'compiled' if compiled else 'eager'}")  # Dynamo imports it for cond
    sys.modules[module.__name__] = module
    ns = vars(module)
    exec(source, ns)
    fn = torch.compile(ns["f"], backend="eager", dynamic=True) if compiled else ns["f"]
    args = ns["inputs"]("cpu", 0)
    try:
        out = fn(*args)
    except Exception as e:
        out = e
    return out, args, ns


out, args, ns = run(EAGER_PROGRAM, compiled=False)
c_out, c_args, c_ns = run(PROGRAM, compiled=True)
assert isinstance(c_out, Exception) == isinstance(out, Exception), f"compiled raised {c_out!r}; eager returned {out!r}"
