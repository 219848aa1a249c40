"""The `conds` family: `torch.cond` nested up to three levels, illegal-on-purpose conds, branches closing
over outer tensors, unbacked sizes.

`nested` holds the family's main fragment and imports `illegal`, `closures` and `unbacked` in registration order.
"""
from __future__ import annotations

from . import nested  # noqa: F401
