"""The `stdlib` family: the builtins and standard-library objects Dynamo models one by one: builtin
functions, list/tuple/dict/set methods, collections, functools, itertools, operator, math, dataclasses,
named tuples, enums, pytree, tensor metadata as Python values, and containers of tensors.

The fragments live in the `stdlib_*.py` modules imported here; importing this module registers them.
"""
from __future__ import annotations

from . import (  # noqa: F401  (registers the fragments)
    stdlib_autograd,
    stdlib_builtins,
    stdlib_data,
    stdlib_dicts,
    stdlib_func,
    stdlib_handlers,
    stdlib_meta,
    stdlib_objects,
    stdlib_seq,
    stdlib_tensors,
    stdlib_torchapi,
    stdlib_wrappers,
)
from .stdlib_common import FAMILY

__all__ = ["FAMILY"]
