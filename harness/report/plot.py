"""A campaign's progress as an SVG chart (no plotting dependency): cases and unique findings over time.

People read a flattening unique-findings curve faster than a table: it says
whether a longer run is likely to find more.
"""
from __future__ import annotations

from pathlib import Path

WIDTH, HEIGHT, PAD = 640, 300, 48


def _polyline(points: list[tuple[float, float]], t_max: float, y_max: float, colour: str) -> str:
    if not points:
        return ""
    coords = " ".join(
        f"{PAD + (WIDTH - 2 * PAD) * t / t_max:.1f},{HEIGHT - PAD - (HEIGHT - 2 * PAD) * y / y_max:.1f}"
        for t, y in points)
    return f'<polyline fill="none" stroke="{colour}" stroke-width="2" points="{coords}"/>'


def progress_svg(samples: list[tuple[float, int, int]], title: str) -> str:
    """`samples` are (seconds, cases, unique findings); each curve is scaled to its own maximum."""
    t_max = max((s[0] for s in samples), default=1.0) or 1.0
    cases_max = max((s[1] for s in samples), default=1) or 1
    unique_max = max((s[2] for s in samples), default=1) or 1
    cases = _polyline([(s[0], s[1]) for s in samples], t_max, cases_max, "#4477aa")
    unique = _polyline([(s[0], s[2]) for s in samples], t_max, unique_max, "#cc3311")
    bottom, right = HEIGHT - PAD, WIDTH - PAD
    return f"""<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}" font-family="sans-serif"
 font-size="12"><rect width="100%" height="100%" fill="white"/>
<text x="{PAD}" y="20" font-size="14">{title}</text>
<line x1="{PAD}" y1="{bottom}" x2="{right}" y2="{bottom}" stroke="black"/>
<line x1="{PAD}" y1="{PAD}" x2="{PAD}" y2="{bottom}" stroke="black"/>
<text x="{right}" y="{bottom + 20}" text-anchor="end">{t_max:.0f} s</text>
<text x="{PAD}" y="{bottom + 20}">0 s</text>
{cases}{unique}
<text x="{PAD + 8}" y="{PAD + 4}" fill="#4477aa">cases (max {cases_max})</text>
<text x="{PAD + 8}" y="{PAD + 20}" fill="#cc3311">unique findings (max {unique_max})</text>
</svg>
"""


def write_progress_svg(path: Path, samples: list[tuple[float, int, int]], title: str) -> Path:
    path.write_text(progress_svg(samples, title))
    return path
