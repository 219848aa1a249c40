"""The `stdlib` family: the builtins and standard-library objects Dynamo models one by one: builtin
functions, list/tuple/dict/set methods, collections, functools, itertools, operator, math, dataclasses,
named tuples, enums and pytree.

The fragments live here (and in `stdlib_*.py` modules it imports); importing this module registers them.
"""
from __future__ import annotations

FAMILY = "stdlib"
