"""The oracle table: each oracle is `(case, observations, trace) -> list[Finding]` and never raises."""
from __future__ import annotations

import traceback
from collections.abc import Callable
from typing import Any

from .model import Finding, Observations

Oracle = Callable[[Any, Observations, Any], list[Finding]]
ORACLES: dict[str, Oracle] = {}


def oracle(name: str):
    """Register a function as the oracle called `name`."""

    def deco(fn: Oracle) -> Oracle:
        ORACLES[name] = fn
        return fn

    return deco


def run_oracles(case: Any, obs: Observations, trace: Any = None, only: tuple[str, ...] = ()) -> list[Finding]:
    """Every registered oracle (or those in `only`); an oracle that raises becomes a `harness` finding."""
    from .model import finding

    found: list[Finding] = []
    for name, fn in ORACLES.items():
        if only and name not in only:
            continue
        try:
            found.extend(fn(case, obs, trace))
        except Exception as e:  # an oracle bug must never lose the case
            found.append(finding("harness", "oracle-error", f"oracle {name} raised {type(e).__name__}: {e}",
                                 f"{name}:{type(e).__name__}", severity="info",
                                 details=(traceback.format_exc()[-6000:],)))
    return found


Renderer = Callable[[Any, Any], list[str]]
RENDERERS: dict[str, Renderer] = {}


def renders(name: str):
    """Register the function rendering the repro check for findings of the oracle called `name`."""

    def deco(fn: Renderer) -> Renderer:
        RENDERERS[name] = fn
        return fn

    return deco


def render_check(finding: Finding, case: Any) -> list[str]:
    """The repro's check for `finding`, rendered by its own oracle (see oracles/checks.py for the names it
    may use); raises `checks.Unrenderable` when that oracle has no torch-only check for it."""
    from .checks import Unrenderable

    if finding.oracle not in RENDERERS:
        raise Unrenderable(f"the {finding.oracle} oracle renders no standalone check")
    return RENDERERS[finding.oracle](finding, case)
