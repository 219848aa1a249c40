"""`dynfuzz fuzz --resume DIR`: continue a campaign whose parent died (SIGKILL, a lost CI runner).

Note [Resuming a campaign]
A campaign rewrites `OUT/summary.json` after every batch of finished cases, atomically, with a `resume`
block: the stream position (`next_index`, the next seed index to draw) and the indices drawn but not
finished (`open_indices`: in flight, waiting to be confirmed, drawn ahead). Resuming reads the settings
from that file (a flag that contradicts them is a usage error; `--budget` gives new time), restores the
counts, keeps every signature already found (counted again, never re-filed or re-reported), runs the open
indices again first (they did not crash: the parent died), then continues the seed stream. A finding
filed between a case's end and the summary's rewrite is re-found by the re-run under the same signature,
so the union has no duplicates and loses nothing.
"""
from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dynfuzz.errors import UsageError

# summary.json field -> the `dynfuzz fuzz` flag (argparse dest) it came from
SETTINGS = {"seed": "seed", "families": "family", "backend": "backend", "device": "device",
            "fullgraph": "fullgraph", "dynamic": "dynamic", "compiler": "compiler", "workers": "workers"}
_COUNTERS = ("cases", "findings", "crashes", "hangs", "eager_errors")


@dataclass
class ResumeState:
    """What a resumed campaign takes over from the previous run in the same directory."""

    out: Path
    summary: dict[str, Any]
    next_index: int = 0
    open_indices: list[int] = field(default_factory=list)

    @property
    def previous_signatures(self) -> dict[str, dict[str, Any]]:
        """The earlier run's findings by identity (signature and cheap key; by signature alone for a summary
        written before findings carried their cheap key)."""
        from dynfuzz.run.ledger import identity

        return {identity(row["signature"], row["cheap_key"]) if row.get("cheap_key") else row["signature"]: dict(row)
                for row in self.summary.get("unique_findings", [])}


def load(out: Path) -> ResumeState:
    """Read DIR/summary.json; a missing, corrupt or foreign file is a one-line usage error."""
    path = Path(out) / "summary.json"
    if not path.is_file():
        raise UsageError(f"--resume {out}: no summary.json there (is it a campaign's --out directory?)")
    try:
        summary = json.loads(path.read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise UsageError(f"--resume {out}: summary.json is corrupt ({type(e).__name__}: {e})") from None
    block = summary.get("resume") if isinstance(summary, dict) else None
    if not isinstance(block, dict) or not isinstance(block.get("next_index"), int) \
            or not all(isinstance(i, int) for i in block.get("open_indices", [])):
        raise UsageError(f"--resume {out}: summary.json has no valid `resume` block (written by an older "
                         f"dynfuzz, or edited)")
    if not all(isinstance(row, dict) and "signature" in row for row in summary.get("unique_findings", [])):
        raise UsageError(f"--resume {out}: summary.json's unique_findings are corrupt")
    findings = Path(out) / "findings"
    if findings.exists() and not findings.is_dir():
        raise UsageError(f"--resume {out}: findings is not a directory")
    return ResumeState(Path(out), summary, block["next_index"], sorted(block.get("open_indices", [])))


def apply_settings(state: ResumeState, args: Any, given: set[str]) -> None:
    """Fill `args` from the saved settings; a flag given on the command line that disagrees: UsageError."""
    for key, dest in SETTINGS.items():
        if key not in state.summary:
            continue
        saved = state.summary[key]
        if key == "families":
            saved = list(saved) or None
        if dest in given and getattr(args, dest) != saved:
            raise UsageError(f"--resume {state.out}: --{dest.replace('_', '-')} {getattr(args, dest)!r} conflicts "
                             f"with the campaign's {saved!r} (drop the flag; only --budget may change)")
        setattr(args, dest, saved)


def restore(ledger: Any, state: ResumeState) -> None:
    """Counts from the previous run, and its signatures as already found."""
    s = state.summary
    for name in _COUNTERS:
        setattr(ledger, name, getattr(ledger, name) + int(s.get(name, 0)))
    ledger.features.update(Counter(s.get("features", {})))
    ledger.by_oracle.update(Counter(s.get("by_oracle", {})))
    ledger.by_kind.update(Counter(s.get("by_kind", {})))
    ledger.known_hits.update(Counter(s.get("known_signatures", {})))
    ledger.harness_errors.counts.update(Counter(s.get("harness_errors", {})))
    ledger.torch_seconds += float(s.get("torch_seconds", 0.0))
    ledger.previous = state.previous_signatures
    ledger.previous_seconds = float(s.get("seconds", 0.0))
    ledger.resumed = {"from_next_index": state.next_index, "rerun": len(state.open_indices),
                      "previous_cases": int(s.get("cases", 0))}
