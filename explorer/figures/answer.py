"""The answer to a page's question, marked on the figure that shows it once revealed: an arrow and a label kept
inside the plot (``mark_answer``), on axes held at the range of their data (``hold_range``)."""

from __future__ import annotations

import math

import numpy as np
import plotly.graph_objects as go

from .placement import wrap_text
from .style import LECTURE, NORMAL

ANSWER_INK = "#111111"


def mark_answer(fig: go.Figure, x, y, text: str, axes: tuple[str, str] = ("x", "y"), above: bool = True) -> go.Figure:
    """Point at (x, y), in data units of ``axes``, with an arrow and ``text``: where a figure shows the answer to
    its page's question once it is revealed. Log axes are handled. Changes ``fig`` in place and returns it.

    The label stays inside its plot: plotly widens an autoranged axis to hold an annotation's box (a long answer
    stretched a narrow panel's x axis to five times its data), so the two axes keep the range of their data; the
    text is broken into lines that fit the panel at the lecture font (``MARKED_WIDTH`` wide at the least), the box
    hangs towards the middle of the panel from a point near its left or right edge, and the y range grows where
    the box would leave the plot above (``above``) or below the point."""
    def place(value, axis):
        log = fig.layout[_axis_name(axis)].type == "log"
        return math.log10(value) if log and isinstance(value, (int, float)) and value > 0 else value

    for axis in axes:
        hold_range(fig, axis)
    xa, ya = fig.layout[_axis_name(axes[0])], fig.layout[_axis_name(axes[1])]
    at = _fraction(place(x, axes[0]), xa.range)         # 0 at the left edge of the plot, 1 at the right
    anchor = "left" if at < 0.3 else "right" if at > 0.7 else "center"
    room = {"left": 1 - at, "right": at, "center": 2 * min(at, 1 - at)}[anchor]
    domain = xa.domain or (0, 1)
    units = max(12, int(room * MARKED_WIDTH * (domain[1] - domain[0]) / (0.62 * LECTURE.font_size)))
    lines = [line for part in text.split("<br>") for line in wrap_text(part, units)]
    _make_room(ya, place(y, axes[1]), above, (44 + 1.3 * LECTURE.font_size * len(lines) + 8) / PLOT_HEIGHT)
    font = fig.layout.font.size or NORMAL.font_size
    fig.add_annotation(x=place(x, axes[0]), y=place(y, axes[1]), xref=axes[0], yref=axes[1],
                       text="<br>".join(f"<b>{line}</b>" for line in lines), xanchor=anchor, align="left",
                       showarrow=True, arrowhead=2, arrowwidth=2, arrowcolor=ANSWER_INK, ax=0,
                       ay=-44 if above else 44, font={"size": font, "color": ANSWER_INK},
                       bgcolor="rgba(255,255,255,0.85)", borderpad=3)
    return fig


PLOT_HEIGHT = 260     # px: about the least height of a plot that is marked (a lecture-mode figure under a verdict)
MARKED_WIDTH = 400    # px: about the least width of a plot that is marked (half a 1280 px page in lecture mode)


def _fraction(value: float, bounds) -> float:
    """Where ``value`` lies between an axis's range ends (0 at ``range[0]``, the left or bottom)."""
    r0, r1 = bounds
    return (value - r0) / ((r1 - r0) or 1.0)


def _make_room(axis, at: float, above: bool, need: float) -> None:
    """Stretch a y axis's range so that ``need`` (a fraction of the plot's height) is free above ``at`` (below it
    when not ``above``): room for an answer's label, drawn inside the plot."""
    r0, r1 = axis.range
    need = min(need, 0.6)
    if above and (r1 - at) / ((r1 - r0) or 1.0) < need:
        axis.range = [r0, (at - need * r0) / (1 - need)]
    elif not above and (at - r0) / ((r1 - r0) or 1.0) < need:
        axis.range = [(at - need * r1) / (1 - need), r1]


def _axis_name(ref: str) -> str:
    """``xaxis2`` for ``x2``."""
    return ("xaxis" if ref.startswith("x") else "yaxis") + ref[1:]


def hold_range(fig: go.Figure, ref: str) -> None:
    """Fix axis ``ref`` (``x``, ``y2``, ...) at the range plotly's autorange gives the traces drawn on it (heatmap
    cells, points and bars, with plotly's 5 % pad where it pads), so that annotations added later cannot widen it.
    An axis with a range set already, or with no data, is left as it is."""
    name, letter = _axis_name(ref), ref[0]
    axis = fig.layout[name]
    if axis.range is not None:
        return
    log = axis.type == "log"
    lo, hi, pad = math.inf, -math.inf, False
    for trace in fig.data:
        if (getattr(trace, f"{letter}axis", None) or letter) != ref:
            continue
        if trace.type == "heatmap":
            n = np.shape(trace.z)[1 if letter == "x" else 0]
            coords = getattr(trace, letter)
            c = np.arange(n, dtype=float) if coords is None else np.asarray(coords, dtype=float)
            half = abs(c[-1] - c[0]) / (len(c) - 1) / 2 if len(c) > 1 else 0.5
            lo, hi = min(lo, c.min() - half), max(hi, c.max() + half)
            continue
        values = getattr(trace, letter)
        if values is None:
            continue
        try:
            v = np.asarray([np.nan if e is None else e for e in values], dtype=float)
        except (TypeError, ValueError):          # a category axis: plotly's own range is kept
            return
        v = v[np.isfinite(v) & ((v > 0) if log else True)]
        if trace.type == "bar" and letter == ("y" if trace.orientation != "h" else "x"):
            v = np.append(v, 0.0)
        if v.size:
            v = np.log10(v) if log else v
            lo, hi = min(lo, v.min()), max(hi, v.max())
            pad = pad or letter == "y" or "markers" in (trace.mode or "") or trace.type == "bar"
    if not math.isfinite(lo):
        return
    span = (hi - lo) or 1.0
    lo, hi = (lo - 0.05 * span, hi + 0.05 * span) if pad else (lo, hi)
    axis.range = [hi, lo] if axis.autorange == "reversed" else [lo, hi]
    axis.autorange = False
