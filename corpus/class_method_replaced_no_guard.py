"""[outputs/miscompile] method swapped on the class between calls, instance made in the frame: stale result

Found by dynfuzz (torch 2.13 campaigns) and minimized by hand. K().m(x) with K.m swapped for K.alt between calls: eager calls the new method on call 1,
compiled still runs the old one (t * 2 instead of t + 1). A global instance diverges the same way.
Related: pytorch/pytorch#197860 (replacing the method's __code__ is not guarded either).
torch 2.13.0+cpu, torch.compile(backend="eager"): exits 1 while the bug is present, 0 once fixed."""
DYNFUZZ = {'oracle': 'outputs',
 'kind': 'miscompile',
 'signature': '4546f74be36f',
 'title': '[outputs/miscompile] method swapped on the class between calls, instance made in the frame: stale '
          'result',
 'tags': ['guard-probe', 'method-replace', 'method-replace-class', 'plan-method-replace'],
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
import torch


class K:
    def m(self, t):
        return t * 2

    def alt(self, t):
        return t + 1


def f(x):
    return K().m(x)  # the instance is created inside the compiled frame


def between(call):
    K.m, K.alt = K.alt, K.m  # swap the method on the class between calls


def inputs(device, call=0):
    return (torch.linspace(-1.0, 1.0, 3, device=device),)
'''


def run(source, compiled):
    ns = {"__name__": "repro"}
    exec(source, ns)
    fn = torch.compile(ns["f"], backend="eager") if compiled else ns["f"]
    for call in range(2):
        if call:
            ns["between"](call)
        args = ns["inputs"]("cpu", call)
        try:
            out = fn(*args)
        except Exception as e:
            out = e
    return out, args, ns


out, args, ns = run(PROGRAM, compiled=False)
c_out, c_args, c_ns = run(PROGRAM, compiled=True)
torch.testing.assert_close(c_out, out, equal_nan=True, msg=lambda m: "out values: " + m)
