"""[outputs/miscompile] strict export: logging.Logger.isEnabledFor returns None, so the frame exports the wrong branch

Found while triaging a campaign's refusal buckets on torch 2.14.1: under export (strict torch.export and torch._dynamo.export) Dynamo makes every logging.Logger method return None (isEnabledFor, getEffectiveLevel, hasHandlers), so a condition on one silently takes the other branch. torch.compile graph-breaks on the call and is right.
torch 2.13.0+cpu, torch.export.export(strict=True) at the call's arguments, the exported graph run on them: exits 1 while the bug is present, 0 once fixed."""
DYNFUZZ = {'oracle': 'outputs',
 'kind': 'miscompile',
 'signature': '409708ff9d8a',
 'title': '[outputs/miscompile] strict export: logging.Logger.isEnabledFor returns None, so the frame '
          'exports the wrong branch',
 'tags': ['export'],
 'torch': '2.13.0+cpu',
 'python': '3.11.7',
 'backend': 'eager',
 'device': 'cpu',
 'fullgraph': False,
 'dynamic': None,
 'compiler': 'torch',
 'entry': 'f',
 'seed': None,
 'families': ['export'],
 'status': 'known',
 'upstream': 'https://github.com/pytorch/pytorch/pull/123402'}

import copy
import linecache
import sys
import types

import torch

PROGRAM = r'''
import logging

import torch

LOG = logging.getLogger("dynfuzz.corpus")


def f(x):
    return x + 1 if LOG.isEnabledFor(logging.CRITICAL) else x - 1


def inputs(device, call=0):
    return (torch.zeros(2, device=device),)


COMPILE_OPTIONS = {'export': 'strict'}
'''


AOT_ABSENT = "torch.compile(...).aot_compile is absent from this torch"


def exported(fn, mode):  # fn exported at each call's arguments ("strict": torch.export; "aot": aot_compile;
    # else torch._dynamo.export)
    def call(*args):
        try:  # torch._dynamo.export runs fn once: side effects on its arguments land on a copy
            example = copy.deepcopy(args)
        except Exception:
            example = args
        if mode == "aot":  # precompiled whole (every guard serialized) by the eager backend, then called
            compiled = torch.compile(fn, fullgraph=True, backend="eager")
            if not hasattr(compiled, "aot_compile"):
                raise NotImplementedError(AOT_ABSENT)
            return compiled.aot_compile((args, {}))(*args)
        if mode == "strict":
            class Entry(torch.nn.Module):
                def forward(self, *a):
                    return fn(*a)

            return torch.export.export(Entry(), example, strict=True).module()(*args)
        return torch._dynamo.export(fn, aten_graph=mode == "dynamo-aten")(*example).graph_module(*args)

    return call


def run(source, compiled):
    ns = vars(sys.modules.setdefault(f"repro_{compiled}", types.ModuleType(f"repro_{compiled}")))
    exec(compile(source, linecache.cache.setdefault(ns["__name__"], (len(source), None, source.splitlines(True), ns["__name__"]))[3], "exec"), ns)
    fn = exported(ns["f"], 'strict') if compiled else ns["f"]
    args = ns["inputs"]("cpu", 0)
    out = fn(*args)
    return out, args, ns


out, args, ns = run(PROGRAM, compiled=False)
c_out, c_args, c_ns = run(PROGRAM, compiled=True)
torch.testing.assert_close(c_out, out, equal_nan=True, msg=lambda m: "out values: " + m)
