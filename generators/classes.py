"""The `classes` family: user-defined classes and torch objects with behaviour: classes defined at
module level and in the frame, inheritance and super(), properties, dunder methods, nn.Modules,
autograd.Function, torch.func transforms, checkpoint and functions Dynamo is told to skip.

The fragments live here (and in `classes_*.py` modules it imports); importing this module registers them.
"""
from __future__ import annotations

FAMILY = "classes"
