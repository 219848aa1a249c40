"""[effects/effect-mismatch] call 0: state['b'][0] value differs after the call

torch 2.13.0+cpu, torch.compile(backend="eager"): exits 1 while the bug is present, 0 once fixed."""
DYNFUZZ = {'oracle': 'effects',
 'kind': 'effect-mismatch',
 'signature': '48e049752592',
 'title': "[effects/effect-mismatch] call 0: state['b'][0] value differs after the call",
 'tags': ['cell-closure',
          'class-call',
          'classes',
          'container-deque-maxlen',
          'ordering',
          'out-empty',
          'out-pointwise',
          'out-variant',
          'read-shape',
          'stdlib',
          'stdlib-operator-math',
          'target-cell',
          'via-method',
          'where-global'],
 'torch': '2.13.0+cpu',
 'python': '3.11.7',
 'backend': 'eager',
 'device': 'cpu',
 'fullgraph': False,
 'dynamic': None,
 'compiler': 'torch',
 'entry': 'f',
 'seed': 369,
 'families': [],
 'status': 'open',
 'upstream': None,
 'bucket_cheap': 'effects/wrong-effect: deque-maxlen global .append',
 'bucket': 'effects/wrong-effect: deque-maxlen global .appendleft @dynamo',
 'cause': "deque-maxlen global .appendleft: program state after the compiled call differs from eager's "
          '(written, but wrongly)',
 'layer': 'dynamo'}

import sys
import types

import torch

PROGRAM = r'''
import torch
import collections
b = collections.deque([1], maxlen=1)

def a():
    c = torch.zeros(0)

    def d(t):
        torch.sin(t, out=c)
    return d
e = a()

def f(x):
    b.appendleft(0)
    g = e(x + sum(b))

def inputs(device, call=0):
    return (torch.linspace(0.0, 0.0, 1, device=device),)
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
assert c_ns['b'][0] == ns['b'][0], f"state['b'][0] value: expected {ns['b'][0]!r}, got {c_ns['b'][0]!r}"
