"""The `resizes` family: in-place resizes and tensor metadata mutation, layouts, `out=` aliases.

`mutations` holds the family's main fragments and imports `layout` and `outalias`; `targets` and `ops` are the
tables of what is mutated and how.
"""
from __future__ import annotations

from . import mutations  # noqa: F401
