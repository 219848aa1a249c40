"""[exceptions/crash] fullgraph graph-breaks on `[c for i in range(0) if (c := i) > 0]` as "Read uninitialized cell" (gb0091), though eager runs it (not filed upstream)

torch 2.13.0+cpu, torch.compile(backend="eager", fullgraph=True): exits 1 while the bug is present, 0 once fixed."""
DYNFUZZ = {'oracle': 'exceptions',
 'kind': 'crash',
 'signature': '583e8758fd21',
 'title': '[exceptions/crash] call 0: compiler crashed with Unsupported',
 'tags': ['branch-lambda',
          'chained-compare',
          'cond',
          'cond-depth-1',
          'del-rebind',
          'fullgraph',
          'local-import',
          'pred-const',
          'syntax',
          'walrus'],
 'torch': '2.13.0+cpu',
 'python': '3.11.7',
 'backend': 'eager',
 'device': 'cpu',
 'fullgraph': False,
 'dynamic': None,
 'compiler': 'torch',
 'entry': 'f',
 'seed': 1330,
 'families': [],
 'status': 'open',
 'upstream': None,
 'bucket_cheap': 'exceptions/refused: torch.cond raising Unsupported',
 'bucket': 'exceptions/refused: tensor ops under fullgraph=True raising Unsupported @dynamo',
 'cause': 'tensor ops under fullgraph=True: under fullgraph=True the compiler refused a construct that '
          'should trace (Unsupported)',
 'layer': 'dynamo'}

import torch

PROGRAM = r'''
import torch

def f():
    a = [c for i in range(0) if (c := i) > 0]

def inputs(device, call=0):
    return ()
COMPILE_OPTIONS = {'fullgraph': True}
'''


def run(source, compiled):
    ns = {"__name__": "repro"}
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
