"""Oracles: pure judgements `(case, observations, trace) -> list[Finding]`, one module per aspect."""
from . import effects, exceptions, grads, guards, illegal, outputs, recompiles, reference_agreement  # noqa: F401  (importing registers them)
from .model import CallRecord, ExcInfo, Finding, Observation, Observations, finding, signature
from .registry import ORACLES, oracle, run_oracles

__all__ = ["CallRecord", "ExcInfo", "Finding", "Observation", "Observations", "ORACLES", "finding", "oracle",
           "run_oracles", "signature"]
