"""[grads/backward-crash] cond branches with different output shapes: compiled backward raises RuntimeError (shape '[2, 4]' is invalid)

Found by dynfuzz (conds family, torch 2.13 campaigns) and minimized by hand. Branches whose outputs differ in shape are accepted in forward; the compiled backward raises RuntimeError "shape '[2, 4]' is invalid for input of size 12". Eager (a plain if) computes the gradient.
torch 2.13.0+cpu, torch.compile(backend="eager"): exits 1 while the bug is present, 0 once fixed."""
DYNFUZZ = {'oracle': 'grads',
 'kind': 'backward-crash',
 'signature': 'cab0ce881b4a',
 'title': '[grads/backward-crash] cond branches with different output shapes: compiled backward raises '
          "RuntimeError (shape '[2, 4]' is invalid)",
 'tags': ['cond', 'branch-shape-mismatch', 'branch-lambda', 'requires-grad', 'pred-tensor'],
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


def f(x):
    return torch.cond(x.mean() > -1, lambda a: a[:2] * 2, lambda a: torch.sin(a), (x,))  # outputs differ in shape


def inputs(device, call=0):
    return (torch.linspace(-1.0, 1.0, 12, device=device).reshape(3, 4).requires_grad_(),)
'''
EAGER_PROGRAM = r'''
import torch


def f(x):
    return (lambda a: a[:2] * 2)(x) if bool(x.mean() > -1) else (lambda a: torch.sin(a))(x)


def inputs(device, call=0):
    return (torch.linspace(-1.0, 1.0, 12, device=device).reshape(3, 4).requires_grad_(),)
'''  # the plain-Python rendering eager runs


def backward(out):  # as dynfuzz does: sum_k k * mean(out_k) over the output tensors that require grad
    leaves = [t for t in torch.utils._pytree.tree_leaves(out) if isinstance(t, torch.Tensor)]
    loss = [k * t.float().mean() for k, t in enumerate(leaves, 1) if t.requires_grad and t.is_floating_point()]
    sum(loss).backward() if loss else None


def run(source, compiled):
    module = types.ModuleType(f"repro_{'compiled' if compiled else 'eager'}")  # Dynamo imports it for cond
    sys.modules[module.__name__] = module
    ns = vars(module)
    exec(source, ns)
    fn = torch.compile(ns["f"], backend="eager") if compiled else ns["f"]
    args = ns["inputs"]("cpu", 0)
    try:
        out = fn(*args)
        backward(out)
    except Exception as e:
        out = e
    return out, args, ns


out, args, ns = run(EAGER_PROGRAM, compiled=False)
c_out, c_args, c_ns = run(PROGRAM, compiled=True)
assert not isinstance(c_out, Exception), f"compiled backward raised {c_out!r}, eager did not"
