"""[effects/effect-mismatch] `global D; D += [...]` on a global deque rebinds D to a new deque: maxlen and aliases lost

Found by dynfuzz (torch 2.13 campaign, finding 104e14b6d6c4) and minimized by hand.
deque.__iadd__ works in place and returns the same deque: eager leaves D = deque([5, 3], maxlen=2), the same object.
Compiled stores a NEW deque into the global: deque([0, 5, 3]) without maxlen; other references to the old deque
are left unchanged. Without maxlen the contents agree but the identity is still lost (D is not the old object).
A deque argument (`d += [3]`, no global rebinding) is handled correctly.
torch 2.13.0+cpu, torch.compile(backend="eager"): exits 1 while the bug is present, 0 once fixed."""
DYNFUZZ = {'oracle': 'effects',
 'kind': 'effect-mismatch',
 'signature': '9e335f2d864f',
 'title': '[effects/effect-mismatch] `global D; D += [...]` on a global deque rebinds D to a new deque: '
          'maxlen and aliases lost',
 'tags': ['container-deque-maxlen', 'where-global', 'via-augassign', 'container-mutation'],
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

D = collections.deque([2, 0, 5], maxlen=2)


def f(x):
    global D
    D += [3]  # deque.__iadd__ is in place: D stays the same bounded deque
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
assert c_ns['D'].maxlen == ns['D'].maxlen, f"state['D'] maxlen: expected {ns['D'].maxlen!r}, got {c_ns['D'].maxlen!r}"
