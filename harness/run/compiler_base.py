"""What every compiler is: `CompileSpec` (how to compile) and the `Compiler` interface.

Kept apart from `compilers.py` so the test doubles can subclass `Compiler` without
importing the module that looks them up by name.
"""
from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

COMPILE_DEFAULTS = {"backend": "eager", "device": "cpu", "fullgraph": False, "compiler": "torch"}


@dataclass(frozen=True)
class CompileSpec:
    """How to compile (compiler `torch` or a double's name, backend, device, fullgraph, dynamic), and which
    costlier optional checks run per case: the reference trace, and guard perturbations (which need it)."""

    compiler: str = "torch"
    backend: str = "eager"
    device: str = "cpu"
    fullgraph: bool = False
    dynamic: bool | None = None
    reference: bool = False
    guards: bool = False
    backends: tuple[str, ...] = ()  # --backends: every case also compiled on these, each judged against eager
    cross_device: bool = False  # --cross-device: with device cuda, also compared against CPU eager

    def describe(self) -> str:
        parts = [f"backend={self.backend}", f"device={self.device}", f"fullgraph={self.fullgraph}"]
        if self.dynamic is not None:
            parts.append(f"dynamic={self.dynamic}")
        if self.backends:
            parts[0] = f"backends={','.join(self.backends)}"
        if self.cross_device:
            parts.append("cross-device")
        if self.compiler != "torch":
            parts.insert(0, f"compiler={self.compiler}")
        return " ".join(parts)


class Compiler(ABC):
    """Base class: per-case `reset()`, `compile(fn, options)`, and counters read after the calls."""

    name = "base"

    def __init__(self, spec: CompileSpec) -> None:
        self.spec = spec

    def reset(self) -> None:  # noqa: B027 - optional hook: a compiler without caches has nothing to forget
        """Forget everything compiled for the previous case."""

    @abstractmethod
    def compile(self, fn: Callable, options: dict[str, Any]) -> Callable:
        """The callable run in the compiled mode; `options` are the program's COMPILE_OPTIONS."""

    def exports(self, options: dict[str, Any]) -> bool:
        """Whether `compile(fn, options)` exports rather than compiles (harness/run/export_runner.py): the run is then
        judged on its outputs and errors only. Doubles ignore the `export` option and compile."""
        return False

    def frames(self) -> int:
        """Frames compiled since the last reset (a recompile adds one)."""
        return 0

    def graph_breaks(self) -> int:
        return 0
