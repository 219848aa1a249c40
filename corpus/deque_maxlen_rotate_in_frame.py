"""[outputs/miscompile] deque(maxlen=2) made in the frame loses its maxlen after rotate()
Found by dynfuzz (stdlib family, torch 2.13 campaign: 7 of 150 cases, bucket "deque-maxlen local .append") and
minimized by hand.
Eager returns x + 2 (after rotate d is [7, 2]; append(1) on the full deque drops 7); compiled returns x + 7: the
deque the frame sees after rotate() is unbounded ([7, 2, 1]), and `d.maxlen` reads None.
Cause: DequeVariable has no `rotate`; the deque is then rebuilt through VariableBuilder.wrap_listlike, which wraps a
deque without its maxlen: the root cause of corpus/deque_maxlen_append_overflow_in_frame.py, reached here with a
deque the frame itself made.
Status open, not listed in known_issues.toml (the bounded-deque family; see deque_maxlen_append_overflow_in_frame.py).
torch 2.13.0+cpu, torch.compile(backend="eager"): exits 1 while the bug is present, 0 once fixed."""
DYNFUZZ = {'oracle': 'outputs',
 'kind': 'miscompile',
 'signature': '409708ff9d8a',
 'title': '[outputs/miscompile] deque(maxlen=2) made in the frame loses maxlen after rotate()',
 'tags': ['stdlib', 'stdlib-collections', 'container-deque-maxlen'],
 'torch': '2.13.0+cpu',
 'backend': 'eager',
 'device': 'cpu',
 'fullgraph': False,
 'compiler': 'torch',
 'entry': 'f',
 'seed': None,
 'families': ['stdlib'],
 'status': 'open',
 'upstream': None}

import torch

PROGRAM = r'''
import collections

import torch


def f(x):
    d = collections.deque([2, 7], maxlen=2)
    d.rotate(1)  # d is [7, 2], still bounded: the append below drops 7
    d.append(1)
    return x + d[0]


def inputs(device, call=0):
    return (torch.zeros(2, device=device),)
'''


def run(source, compiled):
    ns = {"__name__": "repro"}
    exec(source, ns)
    fn = torch.compile(ns["f"], backend="eager") if compiled else ns["f"]
    args = ns["inputs"]("cpu", 0)
    out = fn(*args)
    return out, args, ns


out, args, ns = run(PROGRAM, compiled=False)
c_out, c_args, c_ns = run(PROGRAM, compiled=True)
torch.testing.assert_close(c_out, out, equal_nan=True, msg=lambda m: "out values: " + m)
