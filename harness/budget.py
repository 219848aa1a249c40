"""Durations and sizes on the command line: `30s`, `10m`, `2h`, `1h30m`, or plain seconds; `4G`, `512M`."""
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


_SIZE = re.compile(r"(\d+(?:\.\d+)?)\s*([kmgt]?)i?b?")
_SIZE_UNIT = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}


def parse_size(text: str, floor: int = 256 << 20,
               why: str = "a worker needs at least 256M to import torch") -> int | None:
    """Bytes in `text` (`512M`, `4G`, `4GiB`, plain bytes); None for `off`/`none`; UsageError otherwise (below
    `floor` too, saying `why`)."""
    raw = str(text).strip().lower()
    if raw in ("off", "none", "0"):
        return None
    m = _SIZE.fullmatch(raw)
    if not m:
        raise UsageError(f"malformed size {text!r} (use e.g. 4G, 512M, or off)")
    size = int(float(m.group(1)) * _SIZE_UNIT[m.group(2)])
    if size < floor:
        raise UsageError(f"size {text!r} is too small: {why}")
    return size
