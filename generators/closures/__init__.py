"""The `closures` family: nested functions, cells, name shadowing, escaping closures, graph breaks.

`nested` holds the family's main fragments and imports the rest (`callables`, `preexisting`, `agree`) in
registration order; `cells` is what a cell can hold and how closures read and write it. `nested_breaks` registers
a fragment of the opt-in `frontier` family (graph breaks resumed inside nested calls), not of this one.
"""
from __future__ import annotations

from . import nested, nested_breaks  # noqa: F401
