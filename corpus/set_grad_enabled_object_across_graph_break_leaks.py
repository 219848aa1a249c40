"""[recompiles/over-guard] call 1 compiled 1 new frame(s) although its arguments and state equal those of call 0

Minimized by dynfuzz. `cm = torch.set_grad_enabled(False)` made before a graph break and entered after it:
the compiled call returns with grad mode still disabled (eager's `__exit__` restores it; `torch.no_grad()`
objects too), so the next
identical call fails the GLOBAL_STATE guard and recompiles; the leaked grad mode is the bug, the recompile
is how the oracle sees it. Found by the syntax family (with-graph-break); not reported upstream yet.
torch 2.13.0+cpu, torch.compile(backend="eager"): exits 1 while the bug is present, 0 once fixed."""
DYNFUZZ = {'oracle': 'recompiles',
 'kind': 'over-guard',
 'signature': 'aa14c9c99d56',
 'title': '[recompiles/over-guard] call 1 compiled 1 new frame(s) although its arguments and state equal '
          'those of call 0',
 'tags': ['syntax', 'with-graph-break'],
 'torch': '2.13.0+cpu',
 'python': '3.11.7',
 'backend': 'eager',
 'device': 'cpu',
 'fullgraph': False,
 'dynamic': None,
 'compiler': 'torch',
 'entry': 'f',
 'seed': None,
 'families': ['syntax'],
 'status': 'open',
 'upstream': None}

import torch
import torch._dynamo.testing

PROGRAM = r'''
import torch


def f(x):
    acc0 = x + 1
    cm0 = torch.set_grad_enabled(False)
    torch._dynamo.graph_break()
    with cm0:
        w0 = x * 2
    return w0, acc0


def inputs(device, call=0):
    return (torch.linspace(-1.0, 1.0, 3, device=device),)
'''


counter = torch._dynamo.testing.CompileCounterWithBackend("eager")
frames = []


def run(source, compiled):
    ns = {"__name__": "repro"}
    exec(source, ns)
    fn = torch.compile(ns["f"], backend=counter) if compiled else ns["f"]
    for call in range(2):
        args = ns["inputs"]("cpu", call)
        try:
            out = fn(*args)
        except Exception as e:
            out = e
        if compiled:
            frames.append(counter.frame_count)
    return out, args, ns


out, args, ns = run(PROGRAM, compiled=False)
c_out, c_args, c_ns = run(PROGRAM, compiled=True)
assert frames[1] == frames[0], f"call 1 recompiled although it repeats an earlier call: compiled frames after each call {frames}"
