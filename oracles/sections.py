"""Access to the named roots of a call's snapshot (`args`, `out`, `state`, `between`)."""
from __future__ import annotations

from typing import Any

ROOTS = ("args", "out", "state", "between")


def section(snap: Any, name: str) -> Any:
    """The subtree of a root snapshot (a walked dict) for one root name; None if absent."""
    if not (isinstance(snap, tuple) and snap and snap[0] == "dict"):
        return None
    for key, value in snap[2]:
        if key == name:
            return value
    return None


def state_items(snap: Any) -> list[tuple[str, Any]]:
    """The program's globals as `(name, snapshot)` pairs."""
    sub = section(snap, "state")
    return list(sub[2]) if sub else []
