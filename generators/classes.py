"""The `classes` family: user-defined classes and torch objects with behaviour: classes defined at
module level and in the frame, inheritance and super(), properties, dunder methods, nn.Modules,
autograd.Function, torch.func transforms, checkpoint and functions Dynamo is told to skip.

The fragments live in the `classes_*.py` modules imported here (their shared helpers in classes_common.py);
importing this module registers them.
"""
from __future__ import annotations

from . import (  # noqa: F401  (registers the fragments)
    classes_dunder,
    classes_func,
    classes_hops,
    classes_meta,
    classes_nn,
    classes_nn_export,
    classes_numeric,
    classes_special,
    classes_user,
)
from .classes_common import FAMILY  # noqa: F401
