"""[effects/effect-mismatch] call 1: state['b'][0] value differs after the call

torch 2.13.0+cpu, torch.compile(backend="eager"): exits 1 while the bug is present, 0 once fixed."""
DYNFUZZ = {'oracle': 'effects',
 'kind': 'effect-mismatch',
 'signature': 'ef1f5a67e8eb',
 'title': "[effects/effect-mismatch] call 1: state['b'][0] value differs after the call",
 'tags': ['container',
          'container-deque-maxlen',
          'guard-probe',
          'method-replace',
          'method-replace-class',
          'plan-method-replace',
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
 'seed': 151,
 'families': [],
 'status': 'open',
 'upstream': None,
 'bucket_cheap': 'effects/wrong-effect: deque-maxlen global .extendleft after object global attribute del',
 'bucket': 'effects/wrong-effect: deque-maxlen global .extendleft @dynamo',
 'cause': "deque-maxlen global .extendleft: program state after the compiled call differs from eager's "
          '(written, but wrongly)',
 'layer': 'dynamo'}

import torch

PROGRAM = r'''
import torch
import collections
b = collections.deque([], maxlen=3)

def f(x):
    c = torch.tanh(x)
    b.extendleft([0, 1])

def inputs(device, call=0):
    return (torch.linspace(0.0, 0.0, 0, device=device),)
'''


def run(source, compiled):
    ns = {"__name__": "repro"}
    exec(source, ns)
    fn = torch.compile(ns["f"], backend="eager") if compiled else ns["f"]
    for call in range(2):
        args = ns["inputs"]("cpu", call)
        try:
            out = fn(*args)
        except Exception as e:
            out = e
    return out, args, ns


out, args, ns = run(PROGRAM, compiled=False)
c_out, c_args, c_ns = run(PROGRAM, compiled=True)
assert c_ns['b'][0] == ns['b'][0], f"state['b'][0] value: expected {ns['b'][0]!r}, got {c_ns['b'][0]!r}"
