"""The `syntax` family: Python statements Dynamo must translate opcode by opcode: exceptions
(try/except/finally, raise, re-raise), `with` blocks, `match`, loops with break/continue/else, generators,
comprehensions (with graph breaks inside), f-strings, starred unpacking, walrus, `del` and local imports.

The fragments live here (and in `syntax_*.py` modules it imports); importing this module registers them.
"""
from __future__ import annotations

FAMILY = "syntax"

from . import (  # noqa: E402,F401  (importing registers the fragments)
    syntax_exc_attrs,
    syntax_exceptions,
    syntax_flow,
    syntax_gen,
    syntax_misc,
    syntax_with,
)
