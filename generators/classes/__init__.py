"""The `classes` family: user-defined classes and torch objects with behaviour: classes defined at
module level and in the frame, inheritance and super(), properties, dunder methods, nn.Modules,
autograd.Function, torch.func transforms, checkpoint and functions Dynamo is told to skip.

The fragments live in the modules of this package, imported here (their shared helpers in `common`);
importing this module registers them. `build_class` registers a fragment of the opt-in `frontier` family
(classes Dynamo builds itself under `enable_trace_load_build_class`), not of this one.
"""
from __future__ import annotations

from . import (  # noqa: F401  (registers the fragments)
    build_class,
    dunder,
    frame_classes,
    func_transforms,
    hops,
    meta,
    nn,
    nn_export,
    numeric,
    special,
    user,
)
from .common import FAMILY  # noqa: F401
