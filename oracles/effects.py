"""Side effects: the state every call leaves behind (arguments, globals, cells, objects,
containers, tensor data and metadata, aliasing), eager vs compiled.

A divergence where the compiled state still equals the state before the call
is an `effect-lost` (the compiled code dropped a write); any other one is
`effect-mismatch`.
"""
from __future__ import annotations

import os

from .checks import diff_check
from .model import Finding, Observations, finding, paired_calls
from .outputs import describe, diff_key
from .policy import screen, tolerance_for
from .registry import oracle, renders
from .sections import section
from .snapshot import Diffs, diff, without_grads

STATE_ROOTS = ("args", "state", "between")
# The order-is-state construct (issue 14) is also switched off here, through the generators' environment
# switch, so a bench or test can show that comparing order is what finds an attribute-order bug.
DISABLE_ENV = "DYNFUZZ_DISABLE_CONSTRUCTS"
ORDER_CONSTRUCT = "order-state"


def _disabled() -> set[str]:
    return set(os.environ.get(DISABLE_ENV, "").split(","))


def _drop_order(diffs: Diffs) -> None:
    diffs[:] = [d for d in diffs if d[1] != "attribute-order"]


@oracle("effects")
def effects(case, obs: Observations, trace=None) -> list[Finding]:
    found: list[Finding] = []
    for e_call, c_call in paired_calls(obs):  # Note [Later calls follow the first divergence]
        if getattr(case, "intended_error", None):
            break  # illegal-on-purpose programs are judged by the `illegal` oracle
        diffs = Diffs()
        for root in STATE_ROOTS:
            root_diffs = screen(obs, without_grads(diff(section(e_call.state, root), section(c_call.state, root),
                                                        root, Diffs(tolerance_for(obs)), limit=200)))
            diffs.extend(root_diffs)
            diffs.kinds.update(root_diffs.kinds)
        if ORDER_CONSTRUCT in _disabled():
            _drop_order(diffs)
        if not diffs:
            continue
        i = e_call.index
        changed = _changed_paths(c_call.before, c_call.state)
        lost = c_call.before is not None and not any(path in changed for path, *_ in diffs)
        kind = "effect-lost" if lost else "effect-mismatch"
        found.append(finding("effects", kind, f"call {i}: {diffs[0][0]} {diffs[0][1]} differs after the call",
                             diff_key(diffs, case, i), call=i, details=tuple(describe(diffs))))
        break
    return found


def _changed_paths(before, after) -> set[str]:
    """Paths the compiled call changed; a dropped write leaves its path out of this set."""
    if before is None:
        return set()
    changed: set[str] = set()
    for root in ("args", "state"):
        # Storage tags number storages in walk order, and the after-snapshot walks the outputs first,
        # so a tag alone differing between before and after is not a change.
        changed.update(path for path, aspect, *_ in diff(section(before, root), section(after, root), root, limit=200)
                       if aspect != "storage")
    return changed


@renders("effects")
def render_effects_check(f: Finding, case=None) -> list[str]:
    """Assert the first piece of state the call left differently (an argument, a global, a cell...)."""
    return diff_check(f)
