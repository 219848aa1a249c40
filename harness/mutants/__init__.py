"""Dynamo mutants: small monkeypatches of one torch function each, that bring back one kind of bug.

The doubles in `dynfuzz.doubles` replace the whole compiler; a mutant instead breaks one piece of the
real `torch._dynamo` (or of a backend layer), so a campaign against it proves that a given generated
construct reaches that piece and that an oracle catches the breakage. Mutants are for dynfuzz's own
tests and benchmarks, never for a real run.

Each module in this package registers its mutants with `@mutant("name", layer=..., construct=...)`,
the decorated function applying the patch when called. A mutant is switched on for a whole process
tree through the environment (`DYNFUZZ_MUTANTS=a,b`), because campaign workers are spawned: every
worker applies it when it makes its compiler (`apply_from_env`), and so does the parent. `trials` (no
mutant of its own) runs campaigns against mutants and tells which findings each one owes: the one helper
of the tests and `bench/mutants.py`.
"""
from __future__ import annotations

import importlib
import os
import pkgutil
from collections.abc import Callable
from dataclasses import dataclass

ENV = "DYNFUZZ_MUTANTS"
_NOT_MUTANTS = frozenset({"trials"})  # modules of this package that register no mutant


@dataclass(frozen=True)
class Mutant:
    name: str
    apply: Callable[[], None]
    layer: str  # dynamo, aot_eager or inductor: where the injected bug lives
    construct: str  # the generated construct (feature tag) that must expose it
    doc: str


MUTANTS: dict[str, Mutant] = {}
_applied: set[str] = set()
_loaded = False


def mutant(name: str, *, layer: str = "dynamo", construct: str) -> Callable[[Callable[[], None]], Callable[[], None]]:
    """Register `fn` (which applies the patch) as the mutant `name`."""

    def register(fn: Callable[[], None]) -> Callable[[], None]:
        MUTANTS[name] = Mutant(name, fn, layer, construct, (fn.__doc__ or "").strip())
        return fn

    return register


def load() -> dict[str, Mutant]:
    """Import every mutant module of this package (once) and return the registry."""
    global _loaded
    if not _loaded:
        for mod in pkgutil.iter_modules(__path__):
            if mod.name not in _NOT_MUTANTS:
                importlib.import_module(f"{__name__}.{mod.name}")
        _loaded = True
    return MUTANTS


class Unavailable(RuntimeError):
    """A mutant whose target this torch release lacks (a function or attribute added later): it cannot break
    what is not there. The message names the mutant, the release and what is missing."""


def apply(names: list[str] | tuple[str, ...]) -> None:
    """Apply the named mutants in this process (idempotent); unknown names raise KeyError, a mutant whose target
    this torch lacks raises `Unavailable`."""
    registry = load()
    for name in names:
        if name not in _applied:
            try:
                registry[name].apply()
            except (AttributeError, ImportError) as e:
                import torch

                raise Unavailable(f"mutant {name} cannot be applied to torch {torch.__version__}: "
                                  f"{type(e).__name__}: {e}") from None
            _applied.add(name)


def enable(names: list[str] | tuple[str, ...]) -> None:
    """Apply here and export to every process spawned from now on."""
    apply(names)
    os.environ[ENV] = ",".join(sorted(_applied))


def apply_from_env() -> None:
    """Apply the mutants that `DYNFUZZ_MUTANTS` names (called wherever a compiler is made)."""
    names = [n for n in os.environ.get(ENV, "").split(",") if n]
    if names:
        apply(names)
