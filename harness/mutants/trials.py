"""Mutant trials: a campaign run against Dynamo mutants, and the findings it owes to each of them.

The one helper the tests and `bench/mutants.py` use to show that a construct finds its mutant, and that the
mutant survives the same campaign with the construct switched off. A trial is a `dynfuzz fuzz` process of its
own (a mutant patches torch for the whole process tree and must never reach the caller), seed-fixed,
unminimized, with the named constructs off (DYNFUZZ_DISABLE_CONSTRUCTS). It must end as a campaign ends, exit 0
or 1, having judged every case asked for: a campaign that died at start, or stopped short, saved nothing, and a
"survives without its construct" check over nothing would pass without proving anything. `CampaignFailed`
(an AssertionError) says so; `MutantUnavailable` says that a mutant's target is missing from this torch
release (the test is then skipped with that reason).

A saved finding is a mutant's when its standalone repro fails (exit 1) with that mutant alone applied and
passes on unmodified torch: comparing bucket lists of two campaigns instead would be noisy, since a real torch
bug can be filed under another bucket name from one run to the next, and several mutants can share a trial.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dynfuzz.generators.fragments import DISABLE_ENV

from . import ENV

VALUE_ORACLES = ("outputs", "effects")  # a silently wrong value or state: what the mutants inject
RUN_WITH_MUTANT = ("import sys, runpy; from dynfuzz.mutants import apply; "
                   "apply([sys.argv[1]]); runpy.run_path(sys.argv[2], run_name='__main__')")


class CampaignFailed(AssertionError):
    """A trial's campaign did not end as a campaign ends (exit 0 or 1, every case judged)."""


class MutantUnavailable(Exception):
    """A mutant of the trial cannot be applied to this torch release (its target is missing): the trial proves
    nothing there. The message names the mutant, the release and the missing target."""


@dataclass
class Trial:
    """A finished trial campaign: its folder, summary and the mutants it ran under."""

    out: Path
    mutants: tuple[str, ...]
    summary: dict[str, Any]
    seconds: float
    _verdicts: dict[tuple[str, str | None], bool] = field(default_factory=dict, repr=False)

    @property
    def cases(self) -> int:
        return int(self.summary["cases"])

    def findings(self, oracles: tuple[str, ...] = VALUE_ORACLES) -> list[dict[str, Any]]:
        """`summary.json` `unique_findings` rows of these oracles."""
        return [u for u in self.summary["unique_findings"] if u["oracle"] in oracles]

    def repros(self) -> list[Path]:
        """Every standalone script the campaign saved: each bucket's repro and its examples."""
        found = sorted(self.out.glob("findings/*/repro.py")) + sorted(self.out.glob("findings/*/examples/*.py"))
        return list(dict.fromkeys(found))

    def fails(self, repro: Path, mutant: str | None) -> bool:
        """Whether `repro` exits 1 with `mutant` alone applied (None: on unmodified torch); asked once each."""
        key = (str(repro), mutant)
        if key not in self._verdicts:
            self._verdicts[key] = fails_under(repro, mutant)
        return self._verdicts[key]

    def owed_to(self, mutant: str, construct: str | None = None, oracles: tuple[str, ...] | None = VALUE_ORACLES,
                first: bool = False) -> list[Path]:
        """The saved findings of `oracles` (None: any) on a program tagged `construct` (if given) whose repro
        fails under `mutant` alone and passes on unmodified torch; with `first`, at most the first one."""
        from dynfuzz.triage.repro import read_program

        owed = []
        for path in self.repros():
            meta = read_program(path).meta
            if oracles is not None and meta.get("oracle") not in oracles \
                    or construct is not None and construct not in meta.get("tags", ()):
                continue
            if self.fails(path, mutant) and not self.fails(path, None):
                owed.append(path)
                if first:
                    break
        return owed

    def finds(self, mutant: str, construct: str | None = None,
              oracles: tuple[str, ...] | None = VALUE_ORACLES) -> bool:
        return bool(self.owed_to(mutant, construct, oracles, first=True))


def run_trial(out: Path, mutants: str | list[str] | tuple[str, ...], family: str, cases: int, *, seed: int = 0,
              disable: str | list[str] | tuple[str, ...] = (), workers: int = 0, timeout: float = 1200) -> Trial:
    """A seed-fixed campaign of `cases` cases of `family` under `mutants` (none: unmodified torch), with the
    constructs `disable` off, in its own `dynfuzz fuzz` process. Raises `CampaignFailed` unless it exited 0 or 1
    and judged exactly `cases` cases."""
    mutants = tuple([mutants] if isinstance(mutants, str) else mutants)
    disable = ",".join([disable] if isinstance(disable, str) else disable)
    env = {k: v for k, v in os.environ.items() if k not in (ENV, DISABLE_ENV)}
    if disable:
        env[DISABLE_ENV] = disable
    cmd = [sys.executable, "-m", "dynfuzz", "fuzz", "--cases", str(cases), "--family", family,
           "--workers", str(workers), "--seed", str(seed), "--no-db", "--no-progress", "--no-minimize",
           "--budget", f"{int(timeout)}s", "--out", str(out)]
    for name in mutants:
        cmd += ["--mutant", name]
    start = time.perf_counter()
    try:
        done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout + 120)
    except subprocess.TimeoutExpired as e:
        raise CampaignFailed(f"the trial campaign {' '.join(cmd[2:])} ran past {timeout + 120:.0f} s") from e
    seconds = time.perf_counter() - start
    where = f"the trial campaign `{' '.join(cmd[2:])}`"
    if done.returncode == 2 and "cannot be applied to torch" in done.stderr:
        raise MutantUnavailable(done.stderr.strip().splitlines()[-1].removeprefix("dynfuzz: error: "))
    if done.returncode not in (0, 1):
        raise CampaignFailed(f"{where} exited {done.returncode}: {done.stderr[-2000:]}")
    try:
        summary = json.loads((out / "summary.json").read_text())
    except (OSError, ValueError) as e:
        raise CampaignFailed(f"{where} left no readable summary.json ({e}): {done.stderr[-2000:]}") from None
    if summary.get("cases") != cases:
        raise CampaignFailed(f"{where} judged {summary.get('cases')} cases of {cases} "
                             f"(harness errors {summary.get('harness_errors')}): {done.stderr[-2000:]}")
    return Trial(out, mutants, summary, seconds)


def fails_under(repro: Path, mutant: str | None, timeout: float = 300) -> bool:
    """Whether the standalone script `repro` fails (exit 1 on an AssertionError, or torch's crash in its
    compiled call: `repro.script_failed`, as `verify_repro` reads a script) with `mutant` alone applied, or
    on unmodified torch (None), in a fresh process. A script that
    breaks otherwise (exit 1 on a KeyError...) has shown nothing either way."""
    from dynfuzz.triage.repro import script_failed

    env = {k: v for k, v in os.environ.items() if k not in (ENV, DISABLE_ENV)}
    cmd = [sys.executable, "-c", RUN_WITH_MUTANT, mutant, str(repro)] if mutant else [sys.executable, str(repro)]
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout)
    return done.returncode == 1 and script_failed(done.stderr)
