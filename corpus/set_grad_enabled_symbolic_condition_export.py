"""[exceptions/crash] call 0: compiler crashed with InternalTorchDynamoError

torch 2.13.0+cpu, torch._dynamo.export at the call's arguments, the exported graph run on them: exits 1 while the bug is present, 0 once fixed."""
DYNFUZZ = {'oracle': 'exceptions',
 'kind': 'crash',
 'signature': '7b16ae08c944',
 'title': '[exceptions/crash] call 0: compiler crashed with InternalTorchDynamoError',
 'tags': ['classes', 'export', 'nn-export-specialized', 'syntax', 'with-grad-mode', 'with-torch-context'],
 'torch': '2.13.0+cpu',
 'python': '3.11.7',
 'backend': 'eager',
 'device': 'cpu',
 'fullgraph': False,
 'dynamic': None,
 'compiler': 'torch',
 'entry': 'f',
 'seed': None,
 'families': [],
 'status': 'open',
 'upstream': None,
 'bucket_cheap': 'exceptions/crash: value parameter attribute = raising InternalTorchDynamoError in '
                 'torch/_dynamo/variables/base.py:as_python_constant',
 'bucket': "exceptions/crash: tensor ops under export='dynamo' raising InternalTorchDynamoError in "
           'torch/_dynamo/variables/base.py:as_python_constant @dynamo',
 'cause': "tensor ops under export='dynamo': the compiler raised an internal error where eager ran or "
          'refused cleanly (InternalTorchDynamoError in torch/_dynamo/variables/base.py:as_python_constant)',
 'layer': 'dynamo'}

import copy
import sys
import types

import torch

PROGRAM = r'''
import torch

def f(x):
    with torch.set_grad_enabled(x.numel() > 0):
        pass

def inputs(device, call=0):
    return (torch.linspace(0.0, 0.0, 2, device=device),)
COMPILE_OPTIONS = {'export': 'dynamo'}
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
    exec(source, ns)
    fn = torch._dynamo.config.patch(install_free_tensors_for_export=False)(exported(ns["f"], 'dynamo')) if compiled else ns["f"]
    args = ns["inputs"]("cpu", 0)
    try:
        out = fn(*args)
    except Exception as e:
        out = e
    return out, args, ns


out, args, ns = run(PROGRAM, compiled=False)
c_out, c_args, c_ns = run(PROGRAM, compiled=True)
assert isinstance(c_out, Exception) == isinstance(out, Exception), f"compiled raised {c_out!r}; eager returned {out!r}"
