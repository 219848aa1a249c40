"""[exceptions/crash] call 0: compiler crashed with InternalTorchDynamoError

torch 2.13.0+cpu, torch.compile(backend="eager", dynamic=True): exits 1 while the bug is present, 0 once fixed."""
DYNFUZZ = {'oracle': 'exceptions',
 'kind': 'crash',
 'signature': '7b16ae08c944',
 'title': '[exceptions/crash] call 0: compiler crashed with InternalTorchDynamoError',
 'tags': ['branch-lambda',
          'cond',
          'cond-depth-1',
          'dynamic',
          'pred-const',
          'syntax',
          'with-grad-mode',
          'with-torch-context'],
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
 'bucket_cheap': 'exceptions/crash: torch.cond raising InternalTorchDynamoError in '
                 'torch/_dynamo/variables/base.py:as_python_constant',
 'bucket': 'exceptions/crash: tensor ops under dynamic=True raising InternalTorchDynamoError in '
           'torch/_dynamo/variables/base.py:as_python_constant @dynamo',
 'cause': 'tensor ops under dynamic=True: the compiler raised an internal error where eager ran or refused '
          'cleanly (InternalTorchDynamoError in torch/_dynamo/variables/base.py:as_python_constant)',
 'layer': 'dynamo'}

import sys
import types

import torch

PROGRAM = r'''
import torch

def f(x):
    with torch.set_grad_enabled(x.numel() > 0):
        pass

def inputs(device, call=0):
    return (torch.linspace(0.0, 0.0, 2, device=device),)
COMPILE_OPTIONS = {'dynamic': True}
'''


def run(source, compiled):
    ns = vars(sys.modules.setdefault(f"repro_{compiled}", types.ModuleType(f"repro_{compiled}")))
    exec(source, ns)
    fn = torch.compile(ns["f"], backend="eager", dynamic=True) if compiled else ns["f"]
    args = ns["inputs"]("cpu", 0)
    try:
        out = fn(*args)
    except Exception as e:
        out = e
    return out, args, ns


out, args, ns = run(PROGRAM, compiled=False)
c_out, c_args, c_ns = run(PROGRAM, compiled=True)
assert isinstance(c_out, Exception) == isinstance(out, Exception), f"compiled raised {c_out!r}; eager returned {out!r}"
