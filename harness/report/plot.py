"""A campaign's progress chart, `progress.svg`: cases and unique findings over time (matplotlib).

People read a flattening unique-findings curve faster than a table: it says whether a longer run is
likely to find more. Each curve has its own axis (cases left, unique findings right).
"""
from __future__ import annotations

from pathlib import Path

from dynfuzz.report.charts import COLOURS, new_figure, to_svg


def progress_svg(samples: list[tuple[float, int, int]], title: str) -> str:
    """`samples` are (seconds, cases, unique findings); the two curves are the SVG groups `cases` and `unique`."""
    from matplotlib.ticker import MaxNLocator

    fig, ax = new_figure(height=3.2)
    times = [s[0] for s in samples] or [0.0]
    cases = [s[1] for s in samples] or [0]
    unique = [s[2] for s in samples] or [0]
    ax.plot(times, cases, color=COLOURS[0], linewidth=1.8, label="cases", gid="cases")
    ax.set_xlabel("seconds")
    ax.set_ylabel("cases", color=COLOURS[0])
    right = ax.twinx()
    right.step(times, unique, where="post", color=COLOURS[1], linewidth=1.8, label="unique findings",
               gid="unique")
    right.set_ylabel("unique findings", color=COLOURS[1])
    for axis in (ax, right):
        axis.set_ylim(bottom=0)
        axis.yaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_xlim(left=0)
    ax.grid(alpha=0.3)
    ax.set_title(title, fontsize=10)
    return to_svg(fig)


def write_progress_svg(path: Path, samples: list[tuple[float, int, int]], title: str) -> Path:
    path.write_text(progress_svg(samples, title))
    return path
