"""[exceptions/unsupported] call 0: fullgraph compile refused: Argument of `as_subclass` must be a non-dispatcher-style tensor subclass

torch 2.13.0+cpu, torch.compile(backend="eager", dynamic=True, fullgraph=True): exits 1 while the bug is present, 0 once fixed."""
DYNFUZZ = {'oracle': 'exceptions',
 'kind': 'unsupported',
 'signature': '7f5281b15f05',
 'title': '[exceptions/unsupported] call 0: fullgraph compile refused: Argument of `as_subclass` must be a '
          'non-dispatcher-style tensor subclass',
 'tags': ['branch-lambda',
          'classes',
          'cond',
          'cond-depth-1',
          'dynamic',
          'fullgraph',
          'pred-const',
          'torch-function-subclass'],
 'torch': '2.13.0+cpu',
 'python': '3.11.7',
 'backend': 'eager',
 'device': 'cpu',
 'fullgraph': False,
 'dynamic': None,
 'compiler': 'torch',
 'entry': 'f',
 'seed': 172,
 'families': [],
 'status': 'open',
 'upstream': None,
 'bucket_cheap': 'exceptions/refused: torch.cond raising Unsupported',
 'bucket': 'exceptions/refused: tensor ops under fullgraph=True raising Unsupported @dynamo',
 'cause': 'tensor ops under fullgraph=True: under fullgraph=True the compiler refused a construct that '
          'should trace (Unsupported)',
 'layer': 'dynamo'}

import sys
import types

import torch

PROGRAM = r'''
import torch

def f(x):
    d = x.as_subclass(torch.Tensor)

def inputs(device, call=0):
    return (torch.linspace(0.0, 0.0, 0, device=device),)
COMPILE_OPTIONS = {'dynamic': True, 'fullgraph': True}
'''


def run(source, compiled):
    ns = vars(sys.modules.setdefault(f"repro_{compiled}", types.ModuleType(f"repro_{compiled}")))
    exec(source, ns)
    fn = torch.compile(ns["f"], backend="eager", dynamic=True, fullgraph=True) if compiled else ns["f"]
    args = ns["inputs"]("cpu", 0)
    try:
        out = fn(*args)
    except Exception as e:
        out = e
    return out, args, ns


out, args, ns = run(PROGRAM, compiled=False)
c_out, c_args, c_ns = run(PROGRAM, compiled=True)
assert isinstance(c_out, Exception) == isinstance(out, Exception), f"compiled raised {c_out!r}; eager returned {out!r}"
