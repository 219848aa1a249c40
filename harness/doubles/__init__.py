"""Deliberately broken compilers ("doubles"), each proving that one oracle catches one kind of bug.

Every module in this package registers its doubles with `@double("name")`;
they are selectable on the command line with `--compiler NAME`.
"""
from __future__ import annotations

import importlib
import pkgutil

from .base import DOUBLES, DoubleCompiler, double

for _mod in pkgutil.iter_modules(__path__):
    if _mod.name != "base":
        importlib.import_module(f"{__name__}.{_mod.name}")

__all__ = ["DOUBLES", "DoubleCompiler", "double"]
