"""Durations on the command line: `30s`, `10m`, `2h`, `1h30m`, or plain seconds."""
from __future__ import annotations

import re

from dynfuzz.errors import UsageError

_PART = re.compile(r"(\d+(?:\.\d+)?)([smh]?)")
_UNIT = {"": 1, "s": 1, "m": 60, "h": 3600}


def parse_duration(text: str) -> float:
    """Seconds in `text`; UsageError for a negative, empty or malformed duration."""
    raw = str(text).strip().lower()
    if raw.startswith("-"):
        raise UsageError(f"budget must not be negative: {text!r}")
    pos, total = 0, 0.0
    for m in _PART.finditer(raw):
        if m.start() != pos:
            break
        total += float(m.group(1)) * _UNIT[m.group(2)]
        pos = m.end()
    if not raw or pos != len(raw):
        raise UsageError(f"malformed duration {text!r} (use e.g. 30s, 10m, 2h)")
    if total <= 0:
        raise UsageError(f"budget must be positive: {text!r}")
    return total
