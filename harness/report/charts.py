"""The report's plots, drawn with matplotlib and returned as SVG text to inline (no files, no network).

matplotlib rather than hand-written SVG: axes, ticks, legends and step lines come right without our
own layout code, it renders headless (the object-oriented `Figure` API, no pyplot state, no display),
and SVG output stays text that a self-contained HTML page can embed and a browser can draw.
"""
from __future__ import annotations

import io
import re
from collections.abc import Mapping, Sequence

Series = Sequence[tuple[float, float]]
COLOURS = ("#4477aa", "#cc3311", "#228833", "#ccbb44", "#66ccee", "#aa3377", "#bbbbbb")
_PROLOG = re.compile(r"^.*?(?=<svg)", re.S)


def new_figure(height: float = 2.8):
    from matplotlib.figure import Figure

    fig = Figure(figsize=(6.4, height), layout="constrained")
    return fig, fig.subplots()


def to_svg(fig) -> str:
    import matplotlib

    buf = io.StringIO()
    with matplotlib.rc_context({"svg.fonttype": "none", "svg.hashsalt": "dynfuzz"}):
        fig.savefig(buf, format="svg", metadata={"Date": None, "Creator": None})
    return _PROLOG.sub("", buf.getvalue(), count=1)


def line_chart(series: Mapping[str, Series], title: str, xlabel: str, ylabel: str, steps: bool = False) -> str:
    """One line per named series of (x, y) points; `steps` draws a cumulative count as a staircase."""
    fig, ax = new_figure()
    for colour, (label, points) in zip(COLOURS * 4, series.items()):
        if not points:
            continue
        xs, ys = zip(*points)
        if steps:
            ax.step(xs, ys, where="post", color=colour, label=label, linewidth=1.8)
        else:
            ax.plot(xs, ys, color=colour, label=label, linewidth=1.8)
    ax.set_title(title, fontsize=11)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_xlim(left=0)
    ax.set_ylim(bottom=0)
    if steps:
        from matplotlib.ticker import MaxNLocator

        ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    ax.grid(alpha=0.3)
    if len(series) > 1:
        ax.legend(fontsize=8)
    return to_svg(fig)


def bar_chart(counts: Mapping[str, float], title: str, xlabel: str, top: int = 20) -> str:
    """Horizontal bars, largest first: the `top` largest, the title saying how many more were left out (a bar
    summing unrelated labels into "other" would tower over the real ones and mean nothing)."""
    items = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    if len(items) > top:
        title = f"{title} (largest {top} of {len(items)})"
        items = items[:top]
    fig, ax = new_figure(height=max(1.6, 0.28 * len(items) + 0.9))
    labels = [k for k, _ in items][::-1]
    values = [v for _, v in items][::-1]
    ax.barh(labels, values, color=COLOURS[0])
    for y, v in enumerate(values):
        ax.annotate(f"{v:g}", (v, y), xytext=(3, 0), textcoords="offset points", va="center", fontsize=8)
    ax.set_title(title, fontsize=11)
    ax.set_xlabel(xlabel)
    if all(float(v).is_integer() for v in values):
        from matplotlib.ticker import MaxNLocator

        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.tick_params(axis="y", labelsize=8)
    ax.margins(x=0.12)
    return to_svg(fig)


def rate(samples: Sequence[tuple[float, int, int]], window: float | None = None) -> list[tuple[float, float]]:
    """Cases per second over time from (seconds, cases, unique) samples, over a sliding window
    (a twentieth of the run by default), so a slow stretch shows without single-case noise."""
    if len(samples) < 2:
        return []
    window = window or max(samples[-1][0] / 20, 1.0)
    out, j = [], 0
    for t, cases, _ in samples[1:]:
        while samples[j][0] < t - window and j < len(samples) - 1:
            j += 1
        t0, c0 = samples[j][0], samples[j][1]
        if t > t0:
            out.append((t, (cases - c0) / (t - t0)))
    return out


def cumulative(times: Sequence[float], end: float | None = None) -> list[tuple[float, float]]:
    """A staircase of how many items were first seen by each time (0 at the start, held to `end`)."""
    points = [(0.0, 0.0)]
    for n, t in enumerate(sorted(times), start=1):
        points.append((t, float(n)))
    if end is not None and end > points[-1][0]:
        points.append((end, points[-1][1]))
    return points
