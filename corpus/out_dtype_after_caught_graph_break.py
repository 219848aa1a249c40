"""[exceptions/crash] call 0: compiler crashed with AttributeError

torch 2.13.0+cpu, torch.compile(backend="eager"): exits 1 while the bug is present, 0 once fixed."""
DYNFUZZ = {'oracle': 'exceptions',
 'kind': 'crash',
 'signature': 'ae7860052268',
 'title': '[exceptions/crash] call 0: compiler crashed with AttributeError',
 'tags': ['class-call',
          'classes',
          'graph-break-site',
          'lambda-binding',
          'pointwise',
          'stdlib',
          'stdlib-hop-wrappers',
          'syntax'],
 'torch': '2.13.0+cpu',
 'python': '3.11.7',
 'backend': 'eager',
 'device': 'cpu',
 'fullgraph': False,
 'dynamic': None,
 'compiler': 'torch',
 'entry': 'f',
 'seed': None,
 'families': [],
 'status': 'open',
 'upstream': None,
 'bucket_cheap': 'exceptions/crash: object local *= raising AttributeError in '
                 'torch/_dynamo/eval_frame.py:_fn',
 'bucket': 'exceptions/crash: graph_break raising AttributeError in torch/_dynamo/eval_frame.py:_fn @dynamo',
 'cause': 'graph_break: the compiler raised an internal error where eager ran or refused cleanly '
          '(AttributeError in torch/_dynamo/eval_frame.py:_fn)',
 'layer': 'dynamo'}

import sys
import types

import torch

PROGRAM = r'''
import torch

def f(x):
    try:
        torch._dynamo.graph_break()
    except RuntimeError:
        pass
    a = torch.ops.higher_order.out_dtype(torch.ops.aten.mm.default, torch.int32, x.reshape(0, 1), x.reshape(0, 1).t())

def inputs(device, call=0):
    return (torch.linspace(0.0, 0.0, 0, device=device),)
'''


def run(source, compiled):
    ns = vars(sys.modules.setdefault(f"repro_{compiled}", types.ModuleType(f"repro_{compiled}")))
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
