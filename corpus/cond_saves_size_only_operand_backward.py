"""[grads/backward-crash] call 0: backward raised RuntimeError only compiled (cond saves a size-only operand)

Found by dynfuzz's identity-compiler campaign (eager-mode torch.cond runs Dynamo itself) and minimized by hand.
With s marked dynamic and a branch that reads only s.size(0), torch.cond saves s for backward; an in-place
write to s after the cond then fails backward ('modified by an inplace operation'). The equivalent plain
`if` saves nothing of s and backward succeeds. Without mark_dynamic, or without the size read, both agree.
torch 2.13.0+cpu, torch.compile(backend="eager"): exits 1 while the bug is present, 0 once fixed."""
DYNFUZZ = {'oracle': 'grads',
 'kind': 'backward-crash',
 'signature': '06fd6dbdcc0c',
 'title': '[grads/backward-crash] call 0: backward raised RuntimeError only compiled (cond saves a size-only '
          'operand)',
 'tags': ['cond', 'mark-dynamic', 'capture-size', 'grad-operand', 'operand-mutated-after-cond'],
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


def f(x, s):
    r = torch.cond(x.mean() > -0.3, lambda a, b: a * 3 + b.size(0), lambda a, b: a.cos(), (x, s))
    s.add_(1)
    return r


def inputs(device, call=0):
    x = torch.linspace(-0.5, 1.0, 4, device=device).requires_grad_()
    s = torch.linspace(-1.0, 1.0, 4, device=device)
    torch._dynamo.mark_dynamic(s, 0)
    return (x, s)
'''
EAGER_PROGRAM = r'''
import torch


def f(x, s):
    r = x * 3 + s.size(0) if bool(x.mean() > -0.3) else x.cos()
    s.add_(1)
    return r


def inputs(device, call=0):
    x = torch.linspace(-0.5, 1.0, 4, device=device).requires_grad_()
    s = torch.linspace(-1.0, 1.0, 4, device=device)
    torch._dynamo.mark_dynamic(s, 0)
    return (x, s)
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
