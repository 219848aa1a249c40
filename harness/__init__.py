"""dynfuzz: differential fuzzing and test oracles for TorchDynamo (`torch.compile`).

The public API, loaded on first use so that `import dynfuzz` (and the CLI's argument checks) stay fast:

    from dynfuzz import programs, check, minimize, Campaign
    programs()                       # a Hypothesis strategy of generated programs (IR)
    check(source)                    # judge one program's text: the oracles' findings
    minimize(case, spec, budget=60)  # shrink a failing Case toward the same failure
    Campaign(CampaignConfig(...)).run()

Import paths follow one rule: this folder, `harness/`, is the package `dynfuzz` itself, so `harness/X/Y.py`
is `dynfuzz.X.Y`; the other stages are its subpackages under their own folder names, so `generators/X/Y.py`
is `dynfuzz.generators.X.Y` (likewise `oracles/` and `reference_impl/`). One installed name, `dynfuzz`, and no
generic top-level names in site-packages (tests/test_layout.py checks every module against the rule).
"""
from __future__ import annotations

from typing import Any

_API = {
    "programs": ("dynfuzz.generators", "programs"),
    "Case": ("dynfuzz.generators", "Case"),
    "check": ("dynfuzz.check", "check_source"),
    "minimize": ("dynfuzz.triage.minimize", "minimize"),
    "Campaign": ("dynfuzz.campaign.campaign", "Campaign"),
    "CampaignConfig": ("dynfuzz.campaign.campaign", "CampaignConfig"),
    "CompileSpec": ("dynfuzz.run.compiler_base", "CompileSpec"),
}

__all__ = sorted(_API)


def __getattr__(name: str) -> Any:
    if name not in _API:
        raise AttributeError(f"module 'dynfuzz' has no attribute {name!r}")
    import importlib

    module, attr = _API[name]
    value = getattr(importlib.import_module(module), attr)
    globals()[name] = value
    return value
