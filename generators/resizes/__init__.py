"""The `resizes` family: in-place resizes and tensor metadata mutation, layouts, `out=` and `set_` aliases.

`mutations` holds the family's main fragments and imports `layout`, `outalias` and `set_alias`; `targets` and
`ops` are the tables of what is mutated and how.
"""
from __future__ import annotations

from . import mutations  # noqa: F401
