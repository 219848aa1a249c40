"""Mutant of Dynamo's `torch.cond` speculation: the two branches' lifted closures merged by metadata.

Dynamo speculates each branch of a cond in its own subtracer, lifts the outer tensors a branch closes
over to extra graph inputs, and then merges the two branches' input lists (`_merge_graph_inputs`):
an outer tensor both branches read becomes one shared input, the others stay per branch. The mutant
merges by the wrong key: a tensor only the false branch reads is replaced by one only the true branch
reads when their shape, stride and dtype agree, so the false branch computes with the true branch's
closure. Only the `cond-closures` construct has branches that close over different tensors of one shape.
"""
from __future__ import annotations

from . import mutant


def _meta(proxy):
    import torch

    value = proxy.node.meta.get("example_value")
    if not isinstance(value, torch.Tensor):
        return None
    return tuple(value.shape), tuple(value.stride()), value.dtype


@mutant("cond-closure-by-metadata", construct="cond-closures")
def cond_closure_by_metadata() -> None:
    """The false branch's lifted tensor is fed the true branch's when their metadata agree."""
    from torch._dynamo.variables import higher_order_ops

    original = higher_order_ops._merge_graph_inputs

    def merge(l_graph, l_lifted, l_name, r_graph, r_lifted, r_name):
        only_l = [p for p in l_lifted if p not in r_lifted]
        remapped = {}
        for outer, inner in r_lifted.items():
            meta = _meta(outer) if outer not in l_lifted else None
            twin = next((p for p in only_l if meta is not None and _meta(p) == meta), None)
            remapped[twin if twin is not None and twin not in remapped else outer] = inner
        return original(l_graph, l_lifted, l_name, r_graph, remapped, r_name)

    higher_order_ops._merge_graph_inputs = merge



@mutant("cond-unbacked-output-sizes-equated", construct="cond-unbacked-branches")
def cond_unbacked_output_sizes_equated() -> None:
    """torch 2.5's merge of a cond's two outputs, brought back: sizes that differ between the branches and
    hold unbacked symbols (a `masked_select`, a `new_ones(count)`) are asked to be equal instead of merged
    into a fresh unbacked size, which raises `GuardOnDataDependentSymNode` while tracing (pytorch#148206)."""
    import importlib

    from torch.fx.experimental.symbolic_shapes import has_free_unbacked_symbols

    cond_module = importlib.import_module("torch._higher_order_ops.cond")  # the package exports the function

    original = cond_module._merge_output

    def merge(a, b, mode):
        import torch

        if isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor) and a.dim() == b.dim():
            for s0, s1 in zip(a.size(), b.size()):
                if any(isinstance(s, torch.SymInt) and has_free_unbacked_symbols(s.node.expr) for s in (s0, s1)):
                    bool(s0 == s1)
        return original(a, b, mode)

    cond_module._merge_output = merge
