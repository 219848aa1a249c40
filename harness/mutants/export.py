"""Mutants of Dynamo's export path, which only programs drawn with the `export` setting reach.

`torch._dynamo.export` traces the frame into one graph, then rewrites the graph's signature so that it
takes and returns the user's pytrees: each flattened output of the traced frame is matched to a graph
output by identity (`eval_frame.rewrite_signature`). `torch.compile` never runs that rewrite.
"""
from __future__ import annotations

from . import mutant


@mutant("export-outputs-mismatched", construct="export")
def export_outputs_mismatched() -> None:
    """The exported graph returns its outputs in reverse order: `rewrite_signature` matches the frame's
    results against the graph outputs listed back to front."""
    import torch._dynamo.eval_frame as eval_frame

    original = eval_frame.rewrite_signature

    def rewrite_signature(f_sig, graph, fake_mode, flat_args, in_spec, example_fake_inputs, graph_captured_input,
                          graph_captured_output, *rest, **kwargs):
        outputs = list(graph_captured_output) if graph_captured_output is not None else None
        return original(f_sig, graph, fake_mode, flat_args, in_spec, example_fake_inputs, graph_captured_input,
                        outputs[::-1] if outputs else outputs, *rest, **kwargs)

    eval_frame.rewrite_signature = rewrite_signature
