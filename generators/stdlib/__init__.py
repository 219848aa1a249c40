"""The `stdlib` family: the builtins and standard-library objects Dynamo models one by one: builtin
functions, list/tuple/dict/set methods, collections, functools, itertools, operator, math, dataclasses,
named tuples, enums, pytree, tensor metadata as Python values, and containers of tensors.

The fragments live in the modules of this package, imported here; importing the package registers them.
"""
from __future__ import annotations

from . import (  # noqa: F401  (registers the fragments)
    autograd,
    builtin_funcs,
    data,
    dicts,
    func,
    handlers,
    meta,
    objects,
    seq,
    tensors,
    torchapi,
    wrappers,
)
from .common import FAMILY

__all__ = ["FAMILY"]
