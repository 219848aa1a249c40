"""[exceptions/crash] call 0: compiler crashed with IndexError

torch 2.13.0+cpu, torch.compile(backend="eager"): exits 1 while the bug is present, 0 once fixed."""
DYNFUZZ = {'oracle': 'exceptions',
 'kind': 'crash',
 'signature': '80224f1b10ea',
 'title': '[exceptions/crash] call 0: compiler crashed with IndexError',
 'tags': ['class-call', 'classes', 'metadata-op', 'read-iter', 'read-shape', 'target-view', 'unsqueeze_'],
 'torch': '2.13.0+cpu',
 'python': '3.11.7',
 'backend': 'eager',
 'device': 'cpu',
 'fullgraph': False,
 'dynamic': None,
 'compiler': 'torch',
 'entry': 'f',
 'seed': 846,
 'families': [],
 'status': 'open',
 'upstream': None,
 'bucket': 'exceptions/crash: tensor local .unsqueeze_ raising IndexError in torch/_dynamo/utils.py:run_node '
           '@dynamo',
 'cause': 'tensor local .unsqueeze_: the compiler raised an internal error where eager ran or refused '
          'cleanly (IndexError in torch/_dynamo/utils.py:run_node)',
 'layer': 'dynamo'}

import sys
import types

import torch

PROGRAM = r'''
import torch

def f(x):
    a = x[0:]
    a.unsqueeze_(0)
    for b in a:
        pass

def inputs(device, call=0):
    return (torch.linspace(0.0, 0.0, 2, device=device),)
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
