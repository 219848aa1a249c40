"""A double for the gradient oracle: forward values exact, gradients scaled on the way back."""
from __future__ import annotations

import functools

import torch

from .base import DoubleCompiler, double, map_first

GRAD_SCALE = 1.5


class _ScaleGrad(torch.autograd.Function):
    """Identity in the forward pass; multiplies the incoming gradient by GRAD_SCALE."""

    @staticmethod
    def forward(ctx, x):
        return x.clone()

    @staticmethod
    def backward(ctx, grad):
        return grad * GRAD_SCALE


def _perturbable(v) -> bool:
    # Only fresh, unmutated, non-view results: a clone of those is indistinguishable in every snapshot aspect.
    return isinstance(v, torch.Tensor) and v.is_floating_point() and v.grad_fn is not None \
        and not v._is_view() and v._version == 0


def scale_first_grad(value):
    """`value` with its first perturbable output tensor routed through `_ScaleGrad`."""
    return map_first(value, _perturbable, _ScaleGrad.apply)


@double("perturb-grad")
class PerturbGrad(DoubleCompiler):
    """Scales the gradient flowing back through the first differentiable output: a backward miscompile."""

    def wrap(self, fn):
        @functools.wraps(fn)
        def run(*args, **kwargs):
            return scale_first_grad(fn(*args, **kwargs))

        return run
