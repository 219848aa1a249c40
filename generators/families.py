"""Imports every family module so its fragments are registered; the list of families lives here."""
from __future__ import annotations

import importlib

FAMILY_MODULES = ("basic", "export", "conds", "effects", "closures", "resizes", "syntax", "stdlib", "classes")


def load_families() -> None:
    for mod in FAMILY_MODULES:
        importlib.import_module(f"{__package__}.{mod}")
