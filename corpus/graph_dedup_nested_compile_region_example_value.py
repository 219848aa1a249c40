"""[exceptions/crash] use_graph_deduplication and a nested_compile_region called twice: InternalTorchDynamoError KeyError 'example_value'

Found by hand-checking the construct/setting pairs dynfuzz draws (its graph-deduplication setting had also set
track_nodes_for_deduplication, documented as "testing only, ignored" under use_graph_deduplication, yet it hides
this crash); minimized by dynfuzz. The dedup pass reads node.meta["example_value"] of a node that has none
(graph_deduplication.py, _is_tuple_node).
torch 2.13.0+cpu, torch.compile(backend="eager"): exits 1 while the bug is present, 0 once fixed."""
DYNFUZZ = {'oracle': 'exceptions',
 'kind': 'crash',
 'signature': '52a576760f2a',
 'title': '[exceptions/crash] call 0: compiler crashed with InternalTorchDynamoError',
 'tags': ['nested-compile-region', 'config-graph-deduplication'],
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
 'upstream': None}

import sys
import types

import torch

PROGRAM = r'''
import torch

@torch.compiler.nested_compile_region
def a(t):
    return t.sin()

def f(x):
    return a(x) + a(x)

def inputs(device, call=0):
    return (torch.linspace(0.0, 0.0, 0, device=device),)
DYNAMO_CONFIG = {'use_graph_deduplication': True}
'''


def run(source, compiled):
    ns = vars(sys.modules.setdefault(f"repro_{compiled}", types.ModuleType(f"repro_{compiled}")))
    exec(source, ns)
    fn = torch._dynamo.config.patch(use_graph_deduplication=True)(torch._dynamo.config.patch(use_graph_deduplication=True)(torch.compile)(ns["f"], backend="eager")) if compiled else ns["f"]
    args = ns["inputs"]("cpu", 0)
    try:
        out = fn(*args)
    except Exception as e:
        out = e
    return out, args, ns


out, args, ns = run(PROGRAM, compiled=False)
c_out, c_args, c_ns = run(PROGRAM, compiled=True)
assert isinstance(c_out, Exception) == isinstance(out, Exception), f"compiled raised {c_out!r}; eager returned {out!r}"
