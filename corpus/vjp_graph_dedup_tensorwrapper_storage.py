"""[exceptions/crash] torch.func.vjp under use_graph_deduplication: InternalTorchDynamoError (pytorch/pytorch#172026)

torch 2.13.0+cpu, torch.compile(backend="eager"): exits 1 while the bug is present, 0 once fixed."""
DYNFUZZ = {'oracle': 'exceptions',
 'kind': 'crash',
 'signature': 'e2aadb7192f6',
 'title': '[exceptions/crash] call 0: compiler crashed with InternalTorchDynamoError',
 'tags': ['classes',
          'config-graph-deduplication',
          'container',
          'container-list',
          'dynamo-config',
          'func-grad',
          'stdlib',
          'stdlib-list',
          'via-method',
          'where-arg'],
 'torch': '2.13.0+cpu',
 'python': '3.11.7',
 'backend': 'eager',
 'device': 'cpu',
 'fullgraph': False,
 'dynamic': None,
 'compiler': 'torch',
 'entry': 'f',
 'seed': 1145,
 'families': [],
 'status': 'known',
 'upstream': 'https://github.com/pytorch/pytorch/issues/172026',
 'bucket_cheap': 'exceptions/crash: list local .index raising InternalTorchDynamoError in '
                 'torch/_tensor.py:_typed_storage',
 'bucket': 'exceptions/crash: tensor ops raising InternalTorchDynamoError in torch/_tensor.py:_typed_storage '
           '@dynamo',
 'cause': 'tensor ops: the compiler raised an internal error where eager ran or refused cleanly '
          '(InternalTorchDynamoError in torch/_tensor.py:_typed_storage)',
 'layer': 'dynamo'}

import torch

PROGRAM = r'''
import torch

def f(x):
    a, b = torch.func.vjp(lambda u: u, x[:0])

def inputs(device, call=0):
    return (torch.linspace(0.0, 0.0, 0, device=device),)
DYNAMO_CONFIG = {'track_nodes_for_deduplication': True, 'use_graph_deduplication': True}
'''


def run(source, compiled):
    ns = {"__name__": "repro"}
    exec(source, ns)
    fn = torch._dynamo.config.patch(track_nodes_for_deduplication=True, use_graph_deduplication=True)(torch.compile(ns["f"], backend="eager")) if compiled else ns["f"]
    args = ns["inputs"]("cpu", 0)
    try:
        out = fn(*args)
    except Exception as e:
        out = e
    return out, args, ns


out, args, ns = run(PROGRAM, compiled=False)
c_out, c_args, c_ns = run(PROGRAM, compiled=True)
assert isinstance(c_out, Exception) == isinstance(out, Exception), f"compiled raised {c_out!r}; eager returned {out!r}"
