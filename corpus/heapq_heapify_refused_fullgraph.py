"""[exceptions/unsupported] call 0: fullgraph compile refused: Attempted to call function marked as skipped

torch 2.13.0+cpu, torch.compile(backend="eager", fullgraph=True): exits 1 while the bug is present, 0 once fixed."""
DYNFUZZ = {'oracle': 'exceptions',
 'kind': 'unsupported',
 'signature': 'aeaba8e6e636',
 'title': '[exceptions/unsupported] call 0: fullgraph compile refused: Attempted to call function marked as '
          'skipped',
 'tags': ['branch-lambda',
          'cond',
          'cond-depth-1',
          'fullgraph',
          'multi-output',
          'plan-stdlib-list',
          'pred-const',
          'stdlib',
          'stdlib-list'],
 'torch': '2.13.0+cpu',
 'python': '3.11.7',
 'backend': 'eager',
 'device': 'cpu',
 'fullgraph': False,
 'dynamic': None,
 'compiler': 'torch',
 'entry': 'f',
 'seed': 585,
 'families': [],
 'status': 'open',
 'upstream': None,
 'bucket': 'exceptions/refused: heapq.heapify on list global under fullgraph=True raising Unsupported '
           '@dynamo',
 'cause': 'heapq.heapify on list global under fullgraph=True: under fullgraph=True the compiler refused a '
          'construct that should trace (Unsupported)',
 'layer': 'dynamo'}

import sys
import types

import torch

PROGRAM = r'''
import torch
import heapq
a = [0]

def f():
    heapq.heapify(a)

def inputs(device, call=0):
    return ()
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
