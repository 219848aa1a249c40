"""Mutants of what Dynamo does with autograd and optimizers inside a compiled frame.

Compiled autograd (`torch._dynamo.config.compiled_autograd`) turns a `backward()` that a compiled frame
calls into an FX graph, whose leaf gradients are accumulated by `call_accumulate_grad`, and compiles
that graph with Dynamo. An optimizer's `step()` is traced through `OptimizerVariable`. Only the
`autograd-backward` fragment calls backward under compiled autograd (the harness's own backward runs
outside the compiled call), and only `optimizer-step` steps an optimizer in the frame.
"""
from __future__ import annotations

from . import mutant


@mutant("compiled-autograd-double-accumulate", construct="compiled-autograd")
def compiled_autograd_double_accumulate() -> None:
    """Compiled autograd accumulates twice the gradient into a leaf's `.grad`: the graph it captures
    doubles the incoming gradient before `call_accumulate_grad`."""
    import torch
    from torch._dynamo.compiled_autograd import AutogradCompilerInstance

    original = AutogradCompilerInstance.accumulate_grad

    def accumulate_grad(self, variable, variable_grad, grad, has_post_hooks=None):
        if isinstance(grad, torch.Tensor):
            proxy = self.fx_tracer.create_proxy("call_function", torch.mul, (self.to_proxy(grad), 2), {})
            grad = self.allocate_dummy_like(variable)
            self.bind_objects_to_proxies([grad], [proxy])
        return original(self, variable, variable_grad, grad, has_post_hooks)

    AutogradCompilerInstance.accumulate_grad = accumulate_grad


@mutant("optimizer-grad-source-swapped", construct="optimizer-step")
def optimizer_grad_source_swapped() -> None:
    """In a traced `step()`, each parameter's gradient is read from the parameter itself (the source Dynamo
    maps the gradient to is the parameter's): the update moves `p` by `lr * p` instead of `lr * p.grad`."""
    from torch._dynamo.variables.optimizer import OptimizerVariable

    original = OptimizerVariable.map_sources_and_install_guards

    def map_sources_and_install_guards(self, tx):
        original(self, tx)
        for group in self.value.param_groups:
            for p in group["params"]:
                if p.grad is not None and p in self.tensor_to_source:
                    self.grad_to_source[p.grad] = self.tensor_to_source[p]

    OptimizerVariable.map_sources_and_install_guards = map_sources_and_install_guards
