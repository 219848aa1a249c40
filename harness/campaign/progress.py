"""Live progress (cases, cases/s, findings, bugs) and the end-of-run summary and bucket tables, via rich.

On a terminal the tables are rich's; in a log (stderr is not a terminal: CI, a redirect) they are plain
lines, one per metric and one per bucket, never wrapped: rich would fit them into 80 columns, a bucket
key and its repro path folded over many lines."""
from __future__ import annotations

import sys
import time
from typing import Any

from rich.console import Console
from rich.live import Live
from rich.table import Table
from rich.text import Text

METRICS = ("seconds", "cases", "cases_per_second", "findings", "bugs", "refusals", "unique", "known", "queued",
           "crashes", "hangs", "valid_fraction", "overhead_fraction")


class Reporter:
    """A live status line on a terminal; a plain line every 10 s otherwise (CI logs)."""

    def __init__(self, live: bool | None, budget: float) -> None:
        self.console = Console(stderr=True)
        self.live_enabled = self.console.is_terminal if live is None else live
        self.budget = budget
        self.live: Live | None = None
        self.last_plain = 0.0

    def __enter__(self) -> Reporter:
        if self.live_enabled:
            self.live = Live(Text("starting..."), console=self.console, refresh_per_second=4, transient=True)
            self.live.__enter__()
        return self

    def __exit__(self, *exc) -> None:
        if self.live is not None:
            self.live.__exit__(*exc)

    def line(self, s: dict[str, Any]) -> str:
        rate = s["cases"] / s["seconds"] if s["seconds"] > 0 else 0.0
        pct = min(100.0, 100.0 * s["seconds"] / self.budget) if self.budget else 0.0
        text = (f"{pct:5.1f}%  cases {s['cases']}  {rate:.2f} cases/s  "
                f"findings {s['findings']}  bugs {s.get('bugs', s['unique'])}")
        if s.get("queued"):
            text += f" ({s['queued']} minimizing)"
        if s.get("crashes") or s.get("hangs"):
            text += f"  crashes {s['crashes']}  timeouts {s['hangs']}"
        if s.get("nodes"):  # a Ray campaign: cases per node
            text += "  nodes " + " ".join(f"{node}:{n}" for node, n in sorted(s["nodes"].items()))
        return text

    def update(self, s: dict[str, Any]) -> None:
        if self.live is not None:
            self.live.update(Text(self.line(s)))
        elif time.monotonic() - self.last_plain > 10:
            self.last_plain = time.monotonic()
            print(self.line(s), file=sys.stderr, flush=True)

    def print_text(self, text: str) -> None:
        """A block of text as it is: never re-wrapped to the console's width."""
        self.console.print(text, highlight=False, markup=False, soft_wrap=True)

    def final(self, summary: dict[str, Any], rows: list | None = None) -> None:
        """The summary metrics, then one row per bucket (bugs first); `rows` is unused, kept for callers."""
        if not self.console.is_terminal:
            self._final_plain(summary)
            return
        table = Table(title=f"dynfuzz campaign — torch {summary['torch']}, {summary['backend']}/{summary['device']}")
        table.add_column("metric")
        table.add_column("value", justify="right")
        for key in METRICS:
            if key in summary:
                table.add_row(key, str(summary[key]))
        self.console.print(table)
        buckets = summary.get("buckets") or []
        if buckets:
            found = Table(title=f"{summary.get('bugs', 0)} bug(s): one row per root-cause bucket, miscompiles first")
            for col in ("id", "tier", "bucket", "count", "status", "repro"):
                found.add_column(col, overflow="fold")
            for b in buckets[:30]:
                found.add_row(b["id"], b.get("tier", ""), b["key"], str(b["count"]), b["status"], b["repro"] or "")
            self.console.print(found)

    def _final_plain(self, summary: dict[str, Any]) -> None:
        lines = [f"dynfuzz campaign: torch {summary['torch']}, {summary['backend']}/{summary['device']}"]
        lines += [f"  {key}: {summary[key]}" for key in METRICS if key in summary]
        buckets = summary.get("buckets") or []
        if buckets:
            lines.append(f"{summary.get('bugs', 0)} bug(s): one line per root-cause bucket, miscompiles first "
                         "(id, tier, count, status, key, repro)")
            lines += [f"  {b['id']}  {b.get('tier', '-')}  {b['count']}  {b['status']}  {b['key']}  {b['repro'] or '-'}"
                      for b in buckets[:30]]
        self.print_text("\n".join(lines))
