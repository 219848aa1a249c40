"""[exceptions/crash] IntEnum member compared with a dynamic size: InternalTorchDynamoError TypeError in _comparison_with_symnode
Found by dynfuzz (stdlib family, torch 2.13 campaign, bucket "dict local .clear after list argument changes ...
_comparison_with_symnode") and minimized by hand.
Call 0 compiles with a static size and agrees with eager; call 1 (another length) recompiles with s.size(0) a
SymInt, and `Mode.B < s.size(0) + 2` raises InternalTorchDynamoError (TypeError: '<' not supported between
instances of 'object' and 'NoneType') in BuiltinVariable._comparison_with_symnode; eager returns x + 1.
A plain int (2 < s.size(0) + 2) is fine: the IntEnum member is what the SymNode comparison cannot take.
Status open: not yet searched upstream.
torch 2.13.0+cpu, torch.compile(backend="eager"): exits 1 while the bug is present, 0 once fixed."""
DYNFUZZ = {'oracle': 'exceptions',
 'kind': 'crash',
 'signature': '6c87f6443102',
 'title': '[exceptions/crash] IntEnum member < SymInt: InternalTorchDynamoError in _comparison_with_symnode',
 'tags': ['stdlib', 'stdlib-enum-str'],
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

CALLS = 2
PROGRAM = r'''
import enum

import torch


class Mode(enum.IntEnum):
    A = 1
    B = 2


def f(x, s):
    return x + int(Mode.B < s.size(0) + 2)


def inputs(device, call=0):
    return (torch.zeros(1, device=device), torch.zeros(2 + call, device=device))
'''


def run(source, compiled, calls=1):
    ns = {"__name__": "repro"}
    exec(source, ns)
    fn = torch.compile(ns["f"], backend="eager") if compiled else ns["f"]
    outs = []
    for call in range(calls):
        args = ns["inputs"]("cpu", call)
        try:
            outs.append(fn(*args))
        except Exception as e:
            outs.append(e)
    return outs


out = run(PROGRAM, compiled=False, calls=CALLS)
c_out = run(PROGRAM, compiled=True, calls=CALLS)
for i, (e, c) in enumerate(zip(out, c_out)):
    assert isinstance(c, Exception) == isinstance(e, Exception), f"call {i}: compiled raised {c!r}; eager returned {e!r}"
