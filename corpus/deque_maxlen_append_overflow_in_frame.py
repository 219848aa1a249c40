"""[outputs/miscompile] global deque(maxlen=2): after append() the compiled frame sees more than maxlen items

Found by dynfuzz (torch 2.13 campaign, findings 9dd5c2435a79, 9ed17ecb355b, f9c4feb5dfa8) and minimized by hand.
Eager returns x + 1 (d is [0, 1]); compiled returns x + 3: inside the frame d holds [2, 0, 1], more than maxlen.
The deque left after the call is right ([0, 1]), so only values computed in the frame diverge; extend(), += and
extendleft() overflow the same way, for a deque argument or attribute too.
Cause: Dynamo wraps an existing deque without its maxlen (VariableBuilder.wrap_listlike), so the traced deque is
unbounded; the same defect loses appendleft() writes (corpus/deque_maxlen_appendleft_lost.py, c79b963b3f61).
Status open, not listed in known_issues.toml: a call-0 values signature ('out:values' here, 'out[]:values' in
campaigns) is shared by every value miscompile of that output shape, so listing it would hide unrelated bugs.
torch 2.13.0+cpu, torch.compile(backend="eager"): exits 1 while the bug is present, 0 once fixed."""
DYNFUZZ = {'oracle': 'outputs',
 'kind': 'miscompile',
 'signature': '409708ff9d8a',
 'title': '[outputs/miscompile] global deque(maxlen=2): after append() the compiled frame sees more than '
          'maxlen items',
 'tags': ['container-deque-maxlen', 'where-global', 'container-mutation'],
 'torch': '2.13.0+cpu',
 'backend': 'eager',
 'device': 'cpu',
 'fullgraph': False,
 'compiler': 'torch',
 'entry': 'f',
 'seed': None,
 'families': [],
 'status': 'open',
 'upstream': None}

import torch

PROGRAM = r'''
import collections

import torch

d = collections.deque([2, 0], maxlen=2)


def f(x):
    d.append(1)  # on a full bounded deque: eager drops 2, the frame should then see [0, 1]
    return x + sum(d)


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
