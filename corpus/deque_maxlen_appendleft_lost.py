"""[effects/effect-lost] global deque(maxlen=3): appendleft() inside torch.compile is lost

Found by dynfuzz (torch 2.13 campaigns) and minimized by hand. Eager leaves deque([9, 2, 0], maxlen=3); compiled leaves the deque unchanged, deque([2, 0, 5], maxlen=3).
A deque argument loses the write the same way; without maxlen the write is kept.
torch 2.13.0+cpu, torch.compile(backend="eager"): exits 1 while the bug is present, 0 once fixed."""
DYNFUZZ = {'oracle': 'effects',
 'kind': 'effect-lost',
 'signature': 'c79b963b3f61',
 'title': '[effects/effect-lost] global deque(maxlen=3): appendleft() inside torch.compile is lost',
 'tags': ['container-deque-maxlen', 'where-global', 'container-mutation'],
 'torch': '2.13.0+cpu',
 'backend': 'eager',
 'device': 'cpu',
 'fullgraph': False,
 'compiler': 'torch',
 'entry': 'f',
 'seed': None,
 'families': [],
 'status': 'known',
 'upstream': None}

import torch

PROGRAM = r'''
import collections

import torch

d = collections.deque([2, 0, 5], maxlen=3)


def f(x):
    d.appendleft(9)  # on a bounded deque: eager drops 5 and puts 9 first
    return x + 1


def inputs(device, call=0):
    return (torch.zeros(2, device=device),)
'''


def run(source, compiled):
    ns = {"__name__": "repro"}
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
assert c_ns['d'][0] == ns['d'][0], f"state['d'][0] value: expected {ns['d'][0]!r}, got {c_ns['d'][0]!r}"
