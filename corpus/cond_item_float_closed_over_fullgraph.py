"""[exceptions/spurious-exception] call 0: compiled raised TorchRuntimeError, eager did not

torch 2.13.0+cpu, torch.compile(backend="eager", fullgraph=True): exits 1 while the bug is present, 0 once fixed."""
DYNFUZZ = {'oracle': 'exceptions',
 'kind': 'spurious-exception',
 'signature': 'c1f82645ab7d',
 'title': '[exceptions/spurious-exception] call 0: compiled raised TorchRuntimeError, eager did not',
 'tags': ['branch-lambda',
          'capture-unbacked',
          'class-call',
          'classes',
          'cond',
          'cond-depth-1',
          'fullgraph',
          'multi-output',
          'pred-tensor',
          'unbacked-float'],
 'torch': '2.13.0+cpu',
 'python': '3.11.7',
 'backend': 'eager',
 'device': 'cpu',
 'fullgraph': False,
 'dynamic': None,
 'compiler': 'torch',
 'entry': 'f',
 'seed': 74,
 'families': [],
 'status': 'open',
 'upstream': None,
 'bucket_cheap': 'exceptions/spurious-exception: object local .scaled raising TorchRuntimeError in '
                 'torch/_dynamo/exc.py:unimplemented',
 'bucket': 'exceptions/spurious-exception: torch.cond closing over scalar-from-item local under '
           'fullgraph=True raising TorchRuntimeError in torch/_dynamo/exc.py:unimplemented @dynamo',
 'cause': 'torch.cond closing over scalar-from-item local under fullgraph=True: the compiled call raised an '
          'ordinary error that eager did not (TorchRuntimeError in torch/_dynamo/exc.py:unimplemented)',
 'layer': 'dynamo'}

import sys
import types

import torch

PROGRAM = r'''
import torch

def f(x):
    a = x.item()
    b, c = torch.cond(x > 0.0, lambda d: (torch.sin(d), torch.sin(d)), lambda e: (torch.sin(e), e + a), (x,))

def inputs(device, call=0):
    return (torch.linspace(0.0, 0.0, 1, device=device),)
COMPILE_OPTIONS = {'fullgraph': True}
'''


def run(source, compiled):
    ns = vars(sys.modules.setdefault(f"repro_{compiled}", types.ModuleType(f"repro_{compiled}")))
    exec(source, ns)
    fn = torch.compile(ns["f"], backend="eager", fullgraph=True) if compiled else ns["f"]
    args = ns["inputs"]("cpu", 0)
    try:
        out = fn(*args)
    except Exception as e:
        out = e
    return out, args, ns


out, args, ns = run(PROGRAM, compiled=False)
c_out, c_args, c_ns = run(PROGRAM, compiled=True)
assert isinstance(c_out, Exception) == isinstance(out, Exception), f"compiled raised {c_out!r}; eager returned {out!r}"
