"""Mutants of Dynamo's export path, which only programs drawn with the `export` setting reach.

`torch._dynamo.export` traces the frame into one graph, then rewrites the graph's signature so that it
takes and returns the user's pytrees: each flattened output of the traced frame is matched to a graph
output by identity (`eval_frame.rewrite_signature`). `torch.compile` never runs that rewrite. With free
tensors off (`install_free_tensors_for_export=False`, the `nn-export-specialized` construct), export also
still models a module reached from a global as a specialised `NNModuleVariable`, which nothing else in
torch 2.13 does. A precompiled function (`aot_compile`, the `export-aot` mode) checks its serialized
guards against the arguments it binds itself.
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


@mutant("specialized-modulelist-reversed", construct="nn-export-specialized")
def specialized_modulelist_reversed() -> None:
    """Iterating a ModuleList, Sequential or ParameterList that Dynamo models as a specialised module
    (`NNModuleVariable`: export with free tensors off) visits its children last to first. The inlined
    modules of `torch.compile` iterate through their own code, so only the specialised path is broken."""
    from torch._dynamo.variables.nn_module import NNModuleVariable

    original = NNModuleVariable.unpack_var_sequence

    def unpack_var_sequence(self, tx):
        import torch

        items = original(self, tx)
        base = tx.output.get_submodule(self.module_key)
        return items if isinstance(base, torch.nn.ModuleDict) else items[::-1]

    NNModuleVariable.unpack_var_sequence = unpack_var_sequence


@mutant("aot-guard-args-reversed", construct="export-aot")
def aot_guard_args_reversed() -> None:
    """A precompiled function (`torch.compile(...).aot_compile`) binds its call's positional arguments in
    reverse order before checking its guards, so a call with the very arguments it was compiled for fails
    them. Only a precompiled function binds arguments itself: `torch.compile` checks guards on the frame."""
    from torch._dynamo.aot_compile import AOTCompiledFunction

    original = AOTCompiledFunction.prepare_f_locals

    def prepare_f_locals(self, *args, **kwargs):
        return original(self, *args[::-1], **kwargs)

    AOTCompiledFunction.prepare_f_locals = prepare_f_locals
