"""The `effects` family: side effects on containers, objects, classes and autograd, with call plans
that change between calls what compiled code may have specialised on.

The fragments live in one module per topic; importing this module registers them all.
"""
from __future__ import annotations

# Registration order is the order shrinking prefers: the smallest fragments first.
from . import containers  # noqa: F401  isort: skip
from . import probes, objects, aliasing, autograd  # noqa: F401  isort: skip
from . import sole, order, arguments  # noqa: F401  isort: skip
from .common import FAMILY

__all__ = ["FAMILY"]
