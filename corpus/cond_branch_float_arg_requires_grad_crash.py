"""[exceptions/crash] dynamic=True: cond over an operand that requires grad, branch closing over a float argument: UncapturedHigherOrderOpError (data-dependent operator)

Found by dynfuzz (torch 2.13 campaign, finding 5af9463fd2c4: there the float comes from .item() before a graph
break and becomes an input of the resume function) and minimized by hand. Compiled raises
UncapturedHigherOrderOpError 'Data dependent operator ... aten._local_scalar_dense' although the branch never reads
tensor data; eager returns w.cos() * u. Same program with an operand that does not require grad:
corpus/cond_branch_float_arg_dynamic_crash.py (AssertionError in lift_tracked_freevar_to_input).
torch 2.13.0+cpu, torch.compile(backend="eager", dynamic=True): exits 1 while the bug is present, 0 once fixed."""
DYNFUZZ = {'oracle': 'exceptions',
 'kind': 'crash',
 'signature': '5af9463fd2c4',
 'title': '[exceptions/crash] dynamic=True: cond over an operand that requires grad, branch closing over a '
          'float argument: UncapturedHigherOrderOpError (data-dependent operator)',
 'tags': ['cond', 'dynamic', 'branch-lambda', 'pred-tensor', 'requires-grad'],
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


def f(w, u):
    return torch.cond(w.sum() > 0, lambda a: a.cos() * u, lambda a: a + 1, (w,))  # a branch closes over the float u


def inputs(device, call=0):
    return (torch.ones(3, device=device).requires_grad_(), 0.5)


COMPILE_OPTIONS = {"dynamic": True}
'''
EAGER_PROGRAM = r'''
import torch


def f(w, u):
    return (lambda a: a.cos() * u)(w) if bool(w.sum() > 0) else (lambda a: a + 1)(w)


def inputs(device, call=0):
    return (torch.ones(3, device=device).requires_grad_(), 0.5)


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
