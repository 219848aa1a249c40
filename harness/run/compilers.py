"""Compilers the harness can put a program through: real `torch.compile`, or a test double.

A compiler turns the entry function into the callable that is run in the
compiled mode, and reports how many frames it compiled and how many graph
breaks it took. Doubles (see `harness/doubles/`) are deliberately broken
compilers that prove the oracles catch what they claim to catch.
"""
from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from dynfuzz.run.compiler_base import COMPILE_DEFAULTS, Compiler, CompileSpec

__all__ = ["BACKENDS", "COMPILE_DEFAULTS", "DEVICES", "CompileSpec", "Compiler", "TorchCompiler", "compiler_names",
           "compile_with_config", "make_compiler", "quiet_torch_logs", "with_dynamo_config"]

BACKENDS = ("eager", "aot_eager", "inductor")
DEVICES = ("cpu", "cuda")


class TorchCompiler(Compiler):
    """`torch.compile` with a compile-counting wrapper around the chosen backend."""

    name = "torch"

    def __init__(self, spec: CompileSpec) -> None:
        super().__init__(spec)
        import torch
        from dynfuzz.run.torch_compat import compile_counter

        quiet_torch_logs()
        self._torch = torch
        self._new_counter(compile_counter(spec.backend))

    def _new_counter(self, counter: Any) -> None:
        """The compile counter, and the backend handed to torch.compile: the counter behind a wrapper that
        records the higher-order ops of each graph (run/torch_observers.py)."""
        from dynfuzz.run.torch_observers import ObservedBackend

        self.counter = counter
        self.backend = ObservedBackend(counter)

    def reset(self) -> None:
        from dynfuzz.run.torch_compat import compile_counter, reset_dynamo

        reset_dynamo()
        self._new_counter(compile_counter(self.spec.backend))

    def compile(self, fn: Callable, options: dict[str, Any]) -> Callable:
        from dynfuzz.run.export_runner import export_mode, exported
        from dynfuzz.run.torch_logs import with_torch_logs

        mode = export_mode(options)
        if mode is not None:  # Note [What an export run is judged on]
            compiled = exported(fn, mode)
        else:
            kwargs: dict[str, Any] = {"backend": self.backend, "fullgraph": self.spec.fullgraph}
            if self.spec.dynamic is not None:
                kwargs["dynamic"] = self.spec.dynamic
            kwargs.update({k: v for k, v in options.items() if k in ("dynamic", "fullgraph")})
            compiled = self._torch.compile(fn, **kwargs)
        return with_torch_logs(compiled, quiet_torch_logs) if options.get("logs") else compiled

    def exports(self, options: dict[str, Any]) -> bool:
        from dynfuzz.run.export_runner import export_mode

        return export_mode(options) is not None

    def frames(self) -> int:
        return self.counter.frame_count

    def graph_breaks(self) -> int:
        from dynfuzz.run.torch_compat import dynamo_counters

        return sum(dynamo_counters()["graph_break"].values())


def with_dynamo_config(fn: Callable, config: dict[str, Any]) -> Callable:
    """`fn` run under `torch._dynamo.config.patch(**config)`: a program's DYNAMO_CONFIG applies to its
    compiled calls only (eager, which also runs Dynamo inside `torch.cond`, keeps the defaults)."""
    import torch._dynamo

    def run(*args: Any, **kwargs: Any) -> Any:
        with torch._dynamo.config.patch(**config):
            return fn(*args, **kwargs)

    return run


def compile_with_config(compiler: Compiler, fn: Callable, options: dict[str, Any], config: dict[str, Any]) -> Callable:
    """`fn` compiled, and then called, under the program's DYNAMO_CONFIG. Both: some settings are read when
    `torch.compile` builds its wrapper, not while it traces (`compiled_autograd` decides there whether a
    backward inside the frame is compiled), the others while tracing and guarding."""
    if not config:
        return compiler.compile(fn, options)
    import torch._dynamo

    with torch._dynamo.config.patch(**config):
        compiled = compiler.compile(fn, options)
    return with_dynamo_config(compiled, config)


def missing_dynamo_settings(config: dict[str, Any]) -> list[str]:
    """The keys of a program's DYNAMO_CONFIG this torch's `torch._dynamo.config` does not have (a setting
    added in a later release: torch 2.5 has neither `nested_graph_breaks` nor `recompile_limit`)."""
    if not config:
        return []
    import torch._dynamo

    return [key for key in config if not hasattr(torch._dynamo.config, key)]


def quiet_torch_logs() -> None:
    """Graph-break warnings and fake-tensor tracebacks are observations, not output for the user."""
    for logger in ("torch._dynamo", "torch._subclasses.fake_tensor", "torch._inductor", "torch.fx",
                   "torch._functorch"):
        logging.getLogger(logger).setLevel(logging.CRITICAL)


def make_compiler(spec: CompileSpec) -> Compiler:
    """The compiler named by `spec.compiler`: `torch`, or one of the registered doubles.

    Mutants named in the environment (dynfuzz.mutants, test-only) are applied first, so that every
    spawned worker runs the same broken torch as its parent. Two costs of Dynamo's logging are cut, without
    changing what it compiles, unless the process tree runs pristine (`--pristine-torch`, the gate):
    torch_compat's Note [Dynamo's logging speed-ups are a switch, and recorded]. The count-only observers of
    Dynamo's behaviours are installed in every mode (run/torch_observers.py)."""
    from dynfuzz.mutants import apply_from_env
    from dynfuzz.run.torch_compat import apply_speedups
    from dynfuzz.run.torch_observers import install

    apply_from_env()
    apply_speedups()
    install()
    if spec.compiler == "torch":
        return TorchCompiler(spec)
    from dynfuzz.doubles import DOUBLES

    return DOUBLES[spec.compiler](spec)


def compiler_names() -> list[str]:
    from dynfuzz.doubles import DOUBLES

    return ["torch", *sorted(DOUBLES)]
