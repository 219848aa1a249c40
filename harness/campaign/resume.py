"""`dynfuzz fuzz --resume DIR`: continue a campaign whose parent died (SIGKILL, a lost CI runner).

Note [Resuming a campaign]
A campaign rewrites `OUT/summary.json` after every batch of finished cases, atomically, with a `resume`
block: the stream position (`next_index`, the next seed index to draw) and the indices drawn but not
finished (`open_indices`: in flight, waiting to be confirmed, drawn ahead). Resuming reads the settings
from that file (every setting that changes what a case means; a flag that contradicts one is a usage error),
restores everything the campaign had (counts, findings, buckets, `bugs`, skips, the triage jobs still waiting
in `queue/`: campaign/campaign_state.py, the loader `dynfuzz triage` uses too), runs the open indices again first
(they did not crash: the parent died), then continues the seed stream until the original `--cases` or the
budget: `--budget` when given, else what the original budget had left. `seconds` counts the wall time of
every run of the campaign together, so `cases_per_second` stays a rate. A finding filed between a case's
end and the summary's rewrite is re-found by the re-run under the same identity, so the union has no
duplicates and loses nothing.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dynfuzz.campaign.campaign_state import read_summary
from dynfuzz.errors import UsageError
from dynfuzz.triage.known import release
from dynfuzz.triage.repro import torch_version

# summary.json field -> the `dynfuzz fuzz` flag (argparse dest) it came from
SETTINGS = {"seed": "seed", "families": "family", "backend": "backend", "device": "device",
            "fullgraph": "fullgraph", "dynamic": "dynamic", "compiler": "compiler", "workers": "workers",
            "backends": "backends", "cross_device": "cross_device", "reference_enabled": "reference",
            "guards_enabled": "guards", "mutants": "mutant", "shard_flag": "shard", "known_file": "known",
            "swarm": "swarm"}
# settings a resumed run takes over unless the command line gives another value (they change how long it runs,
# not what a case means)
DEFAULTS = {"max_cases": "cases"}
# flags that change how cases run, not what they mean: journaled as given (`settings.flags`), taken over on resume
FLAGS = ("case_timeout", "worker_memory", "pristine_torch", "coverage", "coverage_scope", "db", "db_expire", "guided")
# what the environment (not a flag) decides, and would make a seed draw or judge another case
ENVIRONMENT = ("torch", "hypothesis", "disabled_constructs")


@dataclass
class ResumeState:
    """What a resumed campaign takes over from the previous run in the same directory."""

    out: Path
    summary: dict[str, Any]
    next_index: int = 0
    open_indices: list[int] = field(default_factory=list)

    @property
    def remaining_budget(self) -> float:
        return max(0.0, float(self.summary.get("budget_seconds", 0)) - float(self.summary.get("seconds", 0)))


def flags_of(args: Any) -> dict[str, Any]:
    """The FLAGS of a `fuzz` command line, as the journal keeps them (a database directory made absolute)."""
    from dynfuzz.run.torch_compat import pristine

    values = {dest: getattr(args, dest) for dest in FLAGS if hasattr(args, dest)}
    if values.get("pristine_torch") is None:
        values["pristine_torch"] = pristine()  # DYNFUZZ_PRISTINE_TORCH set by whoever started dynfuzz
    db = values.get("db")
    if isinstance(db, str) and db and "://" not in db:
        values["db"] = str(Path(db).resolve())
    return values


def _from_journal(out: Path) -> dict[str, Any]:
    """What `load` reads of a journaled campaign, shaped like summary.json (settings, stream position, time)."""
    from dynfuzz.campaign.journal import last, read_journal
    from dynfuzz.campaign.journal_views import SETTINGS_FIELDS, effective_settings

    facts = read_journal(out)
    settings = effective_settings(facts, out)
    progress = last(facts, "progress") or {}
    spec = settings.get("spec") or {}
    summary = {k: settings.get(k) for k in SETTINGS_FIELDS}
    summary.update(reference={"enabled": spec.get("reference", False), "guards": spec.get("guards", False)},
                   triage={"minimize_budget": settings.get("minimize_budget")}, flags=settings.get("flags", {}),
                   seconds=(progress.get("counts") or {}).get("seconds", 0.0),
                   resume=(progress.get("process") or {}).get("resume") or {"next_index": 0, "open_indices": []})
    swarm_state = (progress.get("process") or {}).get("swarm_state")
    if swarm_state is not None:  # the weights swarm learned so far (journaled with the large process blocks)
        summary["swarm_state"] = swarm_state
    return summary


def load(out: Path) -> ResumeState:
    """Read the campaign in DIR: its journal, else (an earlier layout) its summary.json; missing, corrupt or
    foreign: a one-line usage error."""
    from dynfuzz.campaign.journal import has_journal

    summary = _from_journal(Path(out)) if has_journal(Path(out)) else read_summary(Path(out), "--resume")
    block = summary.get("resume")
    if not isinstance(block, dict) or not isinstance(block.get("next_index"), int) \
            or not all(isinstance(i, int) for i in block.get("open_indices", [])):
        raise UsageError(f"--resume {out}: summary.json has no valid `resume` block (written by an older "
                         f"dynfuzz, or edited)")
    return ResumeState(Path(out), summary, block["next_index"], sorted(block.get("open_indices", [])))


def settings_of(summary: dict[str, Any]) -> dict[str, Any]:
    """The flag values a summary records, keyed like SETTINGS."""
    out = {k: summary[k] for k in SETTINGS if k in summary}
    if "families" in out:
        out["families"] = list(out["families"]) or None
    if "backends" in out:
        out["backends"] = ",".join(out["backends"]) or None
    reference = summary.get("reference") or {}
    out["reference_enabled"] = bool(reference.get("enabled", False)) and not reference.get("guards", False)
    out["guards_enabled"] = bool(reference.get("guards", False))
    shard = summary.get("shard") or [1, 1]
    out["shard_flag"] = None if list(shard) == [1, 1] else f"{shard[0]}/{shard[1]}"
    if "mutants" in summary:
        out["mutants"] = list(summary["mutants"])
    return out


def apply_settings(state: ResumeState, args: Any, given: set[str]) -> None:
    """Fill `args` from the saved settings; a flag given on the command line that disagrees: UsageError. The
    torch release, the Hypothesis release and switched-off constructs must be the same as the campaign's."""
    saved_flags = {SETTINGS[k]: v for k, v in settings_of(state.summary).items()}
    saved_flags.update(state.summary.get("flags") or {})
    for dest, saved in saved_flags.items():
        if dest in ("known", "db") and dest in given and isinstance(saved, str) and getattr(args, dest) \
                and Path(getattr(args, dest)).resolve() == Path(saved).resolve():
            continue
        if dest in given and getattr(args, dest) != saved:
            raise UsageError(f"--resume {state.out}: --{dest.replace('_', '-')} {getattr(args, dest)!r} conflicts "
                             f"with the campaign's {saved!r} (drop the flag; only --budget may change)")
        setattr(args, dest, saved)
    for key, dest in DEFAULTS.items():
        if dest not in given and key in state.summary:
            setattr(args, dest, state.summary[key])
    triage = state.summary.get("triage") or {}
    if "minimize_budget" in triage and not given & {"minimize_budget", "no_minimize"}:
        saved = triage["minimize_budget"]
        args.no_minimize = saved is None
        if saved is not None:
            args.minimize_budget = f"{saved}s"

    for name, now in current_environment().items():
        then = state.summary.get(name)
        if name == "torch" and then is not None:
            then = release(then)
        if then is not None and then != now:
            raise UsageError(f"--resume {state.out}: the campaign ran with {name} {then!r}, this one has {now!r} "
                             f"(a seed would draw or judge another case)")


def current_environment() -> dict[str, Any]:
    """What summary.json records of the environment (ENVIRONMENT), as it is in this process."""
    import hypothesis
    from dynfuzz.generators.fragments import DISABLE_ENV

    return {"torch": release(torch_version()), "hypothesis": hypothesis.__version__,
            "disabled_constructs": sorted(t for t in os.environ.get(DISABLE_ENV, "").split(",") if t)}
