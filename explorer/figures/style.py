"""One look for every figure, and the single place where plotly figures are assembled.

Figures are built from plain dicts in one ``go.Figure(data=..., layout=...)`` call, which is several
times faster than chains of ``add_trace``/``update_layout``. Plotly's per-property validation is
skipped (``VALIDATE``): it cost about a third of a page rerun. The test suite switches it on
(tests/conftest.py), so a misspelt property fails there instead of being silently dropped.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import plotly.graph_objects as go

from .ink import readable
from .placement import (
    X_TITLE,
    beside_colour_bars,
    deep_update,
    holds,
    legend_placement,
    panel_titles_height,
    text_width,
    title_placement,
    two_lines,
    wrap_text,
)

# The series colours: Okabe & Ito's colour-blind-safe set (their yellow is too faint for a line on white and their
# black is the true function's), ordered so that the first ones, which most figures use, lie furthest apart: under
# simulated deuteranopia, protanopia and tritanopia every pair stays at least 10.9 CAM02-UCS units apart
# (tests/unit/test_colour_vision.py measures every lesson figure). A seventh and eighth series (the kernel
# comparison at its widest) reuse a colour with another marker and dash.
PALETTE = ["#0072B2", "#D55E00", "#E69F00", "#56B4E9", "#CC79A7", "#009E73"]
# the second cue, so that no series is told from another by colour alone: each series index has its own marker
# symbol (a few markers along a line, ``MARKS_PER_LINE``) and, from the seventh on, its own dash
SYMBOLS = ("circle", "square", "diamond", "triangle-up", "x", "star", "cross", "triangle-down")
SERIES_DASHES = ("solid",) * len(PALETTE) + ("longdash", "dashdot")
MARKS_PER_LINE = 12
BAR_PATTERNS = ("", "/", ".", "x")      # and for bars told apart in one figure: the first plain, then hatched


def series_look(i: int) -> dict:
    """Colour, marker symbol and dash of the ``i``-th series of a figure (distinct for the first eight)."""
    return {"color": PALETTE[i % len(PALETTE)], "symbol": SYMBOLS[i % len(SYMBOLS)],
            "dash": SERIES_DASHES[i % len(SERIES_DASHES)]}


HEAT_SCALE = "Viridis"
AXIS = {"gridcolor": "#e6e6e6", "zerolinecolor": "#c8c8c8", "linecolor": "#999999", "showline": True,
        "ticks": "outside", "tickcolor": "#999999", "exponentformat": "power", "automargin": True}


@dataclass(frozen=True)
class Style:
    font_size: int = 13
    line_width: float = 2.0
    marker_size: float = 6.0
    height: int = 420


NORMAL = Style()
LECTURE = Style(font_size=19, line_width=4.0, marker_size=10.0, height=470)
LEGEND_ROW = 480      # px: the widest legend drawn as one row (a half-width chart on a 1280 px projector)
MAIN_WIDTH = 700      # px: about the narrowest a page's main figure is drawn (beside the controls at 1280 px)
VALIDATE = False      # True: plotly checks every property name and value as the figure is built


@dataclass(frozen=True)
class Line:
    """A labelled reference line: vertical (``axis="x"``) or horizontal (``axis="y"``)."""
    value: float
    label: str = ""
    axis: str = "x"
    color: str = "#555555"
    dash: str = "dash"


def line_trace(x, y, name: str, color: str, style: Style, dash: str = "solid", mode: str = "lines",
               symbol: str | None = None, **extra) -> dict:
    """A line (or markers) trace; ``symbol``: its marker symbol, drawn at up to ``MARKS_PER_LINE`` points along a
    line, so that the series is told apart without its colour (``series_look``)."""
    marker = {"size": style.marker_size * 0.7, "color": color}
    if symbol is not None:                  # large enough to tell the shapes apart
        marker["symbol"], marker["size"] = symbol, style.marker_size * 0.9
        if "markers" not in mode:           # a few along a line
            mode, marker["maxdisplayed"] = f"{mode}+markers", MARKS_PER_LINE
    trace = {"type": "scatter", "x": x, "y": y, "mode": mode, "name": name,
             "line": {"color": color, "width": style.line_width, "dash": dash}, "marker": marker}
    trace.update(extra)
    return trace


def series_trace(x, y, name: str, i: int, style: Style, mode: str = "lines", **extra) -> dict:
    """The ``i``-th series of a figure as a line trace in its ``series_look``."""
    look = series_look(i)
    return line_trace(x, y, name, look["color"], style, look["dash"], mode, look["symbol"], **extra)


def _ref_lines(lines: Sequence[Line], style: Style, log_x: bool, log_y: bool):
    shapes, annotations = [], []
    for i, ln in enumerate(lines):
        width = style.line_width * 0.75
        if ln.axis == "x":
            shapes.append({"type": "line", "xref": "x", "yref": "paper", "x0": ln.value, "x1": ln.value,
                           "y0": 0, "y1": 1, "line": {"color": ln.color, "dash": ln.dash, "width": width}})
            ax = math.log10(ln.value) if log_x and ln.value > 0 else ln.value
            if ln.label:
                annotations.append({"x": ax, "xref": "x", "y": 1.0, "yref": "paper", "text": ln.label,
                                    "showarrow": False, "xanchor": "left", "yanchor": "top",
                                    "font": {"size": style.font_size * 0.85, "color": readable(ln.color)}})
        else:
            shapes.append({"type": "line", "xref": "paper", "yref": "y", "x0": 0, "x1": 1, "y0": ln.value,
                           "y1": ln.value, "line": {"color": ln.color, "dash": ln.dash, "width": width}})
            ay = math.log10(ln.value) if log_y and ln.value > 0 else ln.value
            if ln.label:
                annotations.append({"x": 0.01 if i % 2 == 0 else 0.99, "xref": "paper", "y": ay, "yref": "y",
                                    "text": ln.label, "showarrow": False,
                                    "xanchor": "left" if i % 2 == 0 else "right", "yanchor": "bottom",
                                    "font": {"size": style.font_size * 0.85, "color": readable(ln.color)}})
    return shapes, annotations


def log_ticks(traces: Sequence[dict], axis: str) -> dict:
    """Ticks for a log axis: at most about six powers of ten when the data span two decades or more, else 1-2-5
    steps labelled in full (plotly's own choice labels every digit of a short log axis, or every decade of a long
    one, and the labels crowd); a span narrower than two steps gets the two steps around it as its range."""
    values = []
    for trace in traces:
        v = trace.get(axis)
        if v is not None:
            arr = np.asarray(v, dtype=float).ravel() if not isinstance(v, dict) else np.empty(0)
            values.append(arr[np.isfinite(arr) & (arr > 0)])
    finite = np.concatenate(values) if values else np.empty(0)
    if finite.size == 0:
        return {}
    lo, hi = float(finite.min()), float(finite.max())
    decades = math.log10(hi / lo)
    if decades >= 2:
        return {"dtick": max(1, math.ceil(decades / 6))}
    # 1-2-5 steps, each labelled in full (plotly's own "D2" labels 20 and 50 as "2" and "5")
    steps = [m * 10.0 ** k for k in range(math.floor(math.log10(lo)) - 1, math.ceil(math.log10(hi)) + 2)
             for m in (1, 2, 5)]
    values = [v for v in steps if lo / 1.5 <= v <= hi * 1.5]
    out = {"tickvals": values, "ticktext": [f"{v:g}" for v in values]}
    if sum(lo <= v <= hi for v in values) < 2:       # a narrow span (4.18 to 4.19): show the steps around it
        below, above = max(v for v in steps if v <= lo), min(v for v in steps if v >= hi)
        out = {"tickvals": [below, above], "ticktext": [f"{below:g}", f"{above:g}"],
               "range": [math.log10(below), math.log10(above)]}
    return out


def figure(traces: Sequence[dict], title: str, x_title: str, y_title: str, style: Style = NORMAL,
           height: int | None = None, *, lines: Sequence[Line] = (), log_x: bool = False, log_y: bool = False,
           reverse_y: bool = False, xaxis: dict | None = None, yaxis: dict | None = None,
           layout: dict | None = None) -> go.Figure:
    """Assemble a styled figure: titles, axis labels, optional log axes and reference lines.

    A legend is drawn below the plot when more than one line/marker trace is named.
    """
    legend_below = sum(t.get("type") == "scatter" and t.get("showlegend", True) for t in traces) > 1
    shapes, annotations = _ref_lines(lines, style, log_x, log_y)
    lay = {
        "title": {"text": title, "x": 0.01, "xanchor": "left", "xref": "container",
                  "font": {"size": round(style.font_size * 1.25)}},
        "font": {"size": style.font_size, "color": "#262730"},
        "height": (height or style.height) + (50 if legend_below else 0),
        "margin": {"l": 60, "r": 20, "t": 50, "b": 120 if legend_below else 60},
        "legend": {"orientation": "h", "yanchor": "top", "y": -0.28, "xanchor": "left", "x": 0.0},
        "showlegend": legend_below,
        "paper_bgcolor": "white", "plot_bgcolor": "white", "colorway": PALETTE,
        "template": {},     # no plotly default template: the look is set here, and applying one is slow
        "xaxis": {**AXIS, "title": {"text": x_title}, **({"type": "log", **log_ticks(traces, "x")} if log_x else {}),
                  **(xaxis or {})},
        "yaxis": {**AXIS, "title": {"text": y_title}, **({"type": "log", **log_ticks(traces, "y")} if log_y else {}),
                  **({"autorange": "reversed"} if reverse_y else {}), **(yaxis or {})},
        "shapes": shapes, "annotations": annotations,
    }
    lay.update(layout or {})
    # placed on the dict: on a built Figure, placing costs more than building it
    deep_update(lay, legend_placement(lay, traces, LEGEND_ROW) or {})
    deep_update(lay, title_placement(lay))
    return go.Figure(data=list(traces), layout=lay, _validate=VALIDATE)


def grid_axes(n: int, cols: int, x_title: str, y_title: str, titles: Sequence[str], style: Style,
              reverse_y: bool = True, hgap: float = 0.04, vgap: float = 0.12,
              height: int | None = None) -> tuple[dict, list[dict], list[str]]:
    """Layout entries for an n-panel grid (rows of ``cols``): axes with domains, panel titles as
    annotations, and the (xaxis, yaxis) reference of each panel; given the figure's ``height``, rows are spaced so
    that a row's panel titles clear the tick labels of the row above, at the lecture font. The y title is said
    once, left of the first column; with more than one column, the x title once too, centred under the grid
    (``X_TITLE``), where each narrow panel's own would run into its neighbour's."""
    rows = -(-n // cols)
    if rows > 1 and height:            # room between rows for the row above's tick labels and the titles below them
        font = max(style.font_size, LECTURE.font_size)
        lines = max(t.count("<br>") + 1 for t in titles[cols:])
        vgap = max(vgap, (1.9 * font + 6 + lines * 1.3 * font + 6) / max(height - 140, 100))
    width = (1 - hgap * (cols - 1)) / cols
    height = (1 - vgap * (rows - 1)) / rows
    layout, annotations, refs = {}, [], []
    for i in range(n):
        r, c = divmod(i, cols)
        k = "" if i == 0 else str(i + 1)
        x0 = c * (width + hgap)
        y1 = 1 - r * (height + vgap)
        layout[f"xaxis{k}"] = {**AXIS, "domain": _unit(x0, x0 + width), "anchor": f"y{k}",
                               "title": {"text": x_title if r == rows - 1 and cols == 1 else ""}}
        layout[f"yaxis{k}"] = {**AXIS, "domain": _unit(y1 - height, y1), "anchor": f"x{k}",
                               "title": {"text": y_title if c == 0 else ""},
                               **({"autorange": "reversed"} if reverse_y else {})}
        annotations.append({"text": titles[i], "x": x0 + width / 2, "y": y1, "xref": "paper", "yref": "paper",
                            "xanchor": "center", "yanchor": "bottom", "showarrow": False,
                            "font": {"size": style.font_size}})
        refs.append((f"x{k}", f"y{k}"))
    if cols > 1 and x_title:             # hung below the bottom row's tick labels (restyle scales the shift)
        annotations.append({"name": X_TITLE, "text": x_title, "x": 0.5, "y": 0, "xref": "paper", "yref": "paper",
                            "xanchor": "center", "yanchor": "top", "yshift": -round(1.45 * style.font_size + 10),
                            "showarrow": False, "font": {"size": style.font_size}})
    return layout, annotations, refs


def _unit(lo: float, hi: float) -> list[float]:
    """An axis domain, clipped to [0, 1] against rounding."""
    return [min(max(round(lo, 9), 0.0), 1.0), min(max(round(hi, 9), 0.0), 1.0)]


def restyle(fig: go.Figure, style: Style) -> go.Figure:
    """A copy of ``fig`` scaled from the normal look to ``style`` (fonts, lines, markers, height).

    Figures are built in the normal style and may be shared between sessions, so the copy leaves the
    original untouched.
    """
    if style == NORMAL:
        return fig
    out = go.Figure(fig, _validate=VALIDATE)
    f_font = style.font_size / NORMAL.font_size
    f_line = style.line_width / NORMAL.line_width
    f_marker = style.marker_size / NORMAL.marker_size
    out.layout.font.size = style.font_size
    out.layout.title.font.size = round(style.font_size * 1.25)
    out.layout.height = round((fig.layout.height or NORMAL.height) * style.height / NORMAL.height)
    for axis in out.layout:             # bigger labels need fewer ticks, or they overlap on short axes
        if axis.startswith("yaxis"):
            out.layout[axis].nticks = 6
    for ann in out.layout.annotations:
        ann.font.size = round((ann.font.size or NORMAL.font_size) * f_font)
        if ann.name == X_TITLE:         # a grid's x title: plotly keeps no margin for an annotation
            ann.yshift = ann.yshift * f_font               # its line hangs below the shift: margin for both
            out.layout.margin.b = max(out.layout.margin.b or 0, round(-ann.yshift + 1.4 * ann.font.size + 4))
    for shape in out.layout.shapes:
        if shape.line.width:
            shape.line.width = shape.line.width * f_line
    place_legend(out)
    place_title(out, copy=False)
    for trace in out.data:
        if trace.type == "scatter":
            if trace.line.width:
                trace.line.width = trace.line.width * f_line
            size = trace.marker.size
            if size is not None:
                trace.marker.size = np.asarray(size) * f_marker if np.ndim(size) else size * f_marker
    return out


def panel_title_height(fig: go.Figure) -> float:
    """Height (px) of the panel titles a grid draws just above its first row of plots (0 when there are none)."""
    return panel_titles_height(fig.layout.to_plotly_json())


def place_title(fig: go.Figure, width: int | None = None, copy: bool = True) -> go.Figure:
    """``fig`` (a copy, unless ``copy`` is False) with its title broken into lines of at most ``width`` units
    (plotly clips a title wider than its chart; None: only the breaks the text has), hung from the top edge of the
    figure, and a top margin computed to hold, from the top down: the title's lines, then a grid's panel titles,
    then the plot. Computed in pixels, so the browser and an exported file lay it out alike, and nothing can be
    drawn where the title is."""
    if copy:
        fig = go.Figure(fig, _validate=VALIDATE)
    layout = fig.layout.to_plotly_json()
    update = title_placement(layout, width)
    if not holds(layout, update):          # (placed already when the figure was built, unless ``width`` wraps it)
        fig.layout.title.update(update["title"])
        fig.layout.margin.t = update["margin"]["t"]
    return fig


def prepared(fig: go.Figure, style: Style, title_width: int | None = None, height: int | None = None,
             copy: bool = True) -> go.Figure:
    """``fig`` as it is drawn, on a page or in an exported file: in ``style``, at most ``height`` px tall (then its
    legend packed into two rows), its title placed (broken into lines of ``title_width`` units), long vertical axis
    titles broken in two. A copy: ``fig`` itself (possibly shared between sessions) is left as it was, unless
    ``copy`` is False (a figure just drawn for this call: copying it costs as much as the rest)."""
    fig = restyle(fig, style)
    fig = go.Figure(fig, _validate=VALIDATE) if style == NORMAL and copy else fig    # restyle copies unless NORMAL
    if height and (fig.layout.height or NORMAL.height) > height:
        # the plot gets the height: the legend inside the plot where it covers (almost) no data, else below it in
        # two rows at most, a step smaller than the text
        fig.layout.height = height
        fig.layout.legend.font.size = round(style.font_size * 0.85)
        if not legend_inside(fig, MAIN_WIDTH):
            place_legend(fig, MAIN_WIDTH, max_rows=2)
    beside_colour_bars(fig)
    return wrap_axis_titles(place_title(fig, title_width, copy=False))


def wrap_axis_titles(fig: go.Figure) -> go.Figure:
    """``fig`` with each vertical axis title longer than its plot is tall broken into two lines (a long rotated
    title runs up into the figure's title), three when two are still longer (a short lecture-mode plot): a copy
    when one changes, ``fig`` itself otherwise."""
    font = fig.layout.font.size or NORMAL.font_size
    margin = fig.layout.margin
    plot = (fig.layout.height or NORMAL.height) - (margin.t or 50) - (margin.b or 60)
    long = {}
    for key in [k for k in fig.layout if k.startswith("yaxis")]:
        axis = fig.layout[key]
        lo, hi = axis.domain or (0, 1)
        text, room = axis.title.text, 0.95 * plot * (hi - lo) / (0.55 * font)      # in Latin-letter units
        if text and "<br>" not in text and text_width(text) > room:
            long[key] = two_lines(text)
            if max(text_width(line) for line in long[key].split("<br>")) > room:
                long[key] = "<br>".join(wrap_text(text, math.ceil(text_width(text) / 3) + 2))
    if not long:
        return fig
    out = go.Figure(fig, _validate=VALIDATE)
    for key, text in long.items():
        out.layout[key].title.text = text
    return out


def _plotted_points(fig: go.Figure) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every drawn point of the figure's line and marker traces (vertices of lines), in the units the axes draw
    them in (log10 on a log axis), and which of them are markers only (data points, not a line's vertices)."""
    log_x, log_y = fig.layout.xaxis.type == "log", fig.layout.yaxis.type == "log"
    xs, ys, dots = [], [], []
    for trace in fig.data:
        if trace.type != "scatter" or trace.x is None or trace.y is None or not len(trace.x):
            continue
        categories = isinstance(trace.x[0], str)
        x = np.arange(len(trace.x), dtype=float) if categories else np.asarray(trace.x, dtype=float)
        y = np.asarray([np.nan if v is None else v for v in trace.y], dtype=float)
        n = min(len(x), len(y))
        xs.append(x[:n])
        ys.append(y[:n])
        dots.append(np.full(n, "lines" not in (trace.mode or "lines")))
    x, y, dot = (np.concatenate(a) if a else np.empty(0) for a in (xs, ys, dots))
    with np.errstate(divide="ignore", invalid="ignore"):
        x, y = (np.log10(x) if log_x else x), (np.log10(y) if log_y else y)
    ok = np.isfinite(x) & np.isfinite(y)
    return x[ok], y[ok], dot[ok].astype(bool)


def legend_inside(fig: go.Figure, width: float, hide_at_most: float = 0.03) -> bool:
    """Put a line chart's legend inside its plot, in the corner where it covers the fewest drawn points (as
    matplotlib's ``loc="best"`` does) and no marker-only point (data), drawn ``width`` px wide; the bottom margin
    then only holds the x axis.
    Returns False, changing nothing, when the figure is not one plot of lines and markers or when every corner
    would cover more than ``hide_at_most`` of the points."""
    names = [t.name for t in fig.data if t.name and t.showlegend is not False and t.type == "scatter"]
    if not fig.layout.showlegend or len(names) < 2 or any(t.type != "scatter" for t in fig.data) \
            or any(k.startswith(("xaxis2", "yaxis2")) for k in fig.layout):
        return False
    x, y, dots = _plotted_points(fig)
    if x.size == 0:
        return False
    font = fig.layout.legend.font.size or fig.layout.font.size or NORMAL.font_size
    axis_font = fig.layout.font.size or NORMAL.font_size
    bottom = axis_font * 3.5 + 12
    plot_w = width - (fig.layout.margin.l or 60) - (fig.layout.margin.r or 20) - axis_font * 2.5
    plot_h = (fig.layout.height or NORMAL.height) - (fig.layout.margin.t or 50) - bottom
    box_w = (max(40 + 0.6 * font * text_width(n) for n in names) + 16) / plot_w        # as fractions of the plot
    box_h = (len(names) * font * 1.45 + 12) / plot_h
    if box_w > 0.7 or box_h > 0.7:
        return False
    x0, x1 = x.min(), x.max()
    y0, y1 = y.min(), y.max()
    pad_x, pad_y = 0.05 * ((x1 - x0) or 1), 0.05 * ((y1 - y0) or 1)         # plotly's autorange padding
    u = (x - x0 + pad_x) / (x1 - x0 + 2 * pad_x)
    v = (y - y0 + pad_y) / (y1 - y0 + 2 * pad_y)
    corners = {("left", "top"): (u < box_w) & (v > 1 - box_h), ("right", "top"): (u > 1 - box_w) & (v > 1 - box_h),
               ("left", "bottom"): (u < box_w) & (v < box_h), ("right", "bottom"): (u > 1 - box_w) & (v < box_h)}
    for corner in _crossed_corners(fig, box_w, box_h, (x0 - pad_x, x1 + pad_x), (y0 - pad_y, y1 + pad_y),
                                   0.6 * font * 0.85 / plot_w):
        corners.pop(corner, None)
    if not corners:
        return False
    # no data point under the legend (the training points of a fit), and few of the lines' vertices
    corners = {c: covered for c, covered in corners.items() if not (covered & dots).any()}
    if not corners:
        return False
    (xanchor, yanchor), covered = min(corners.items(), key=lambda kv: int(kv[1].sum()))
    if covered.sum() > hide_at_most * x.size:
        return False
    fig.layout.legend.update(orientation="v", xref="paper", yref="paper", xanchor=xanchor, yanchor=yanchor,
                             x=0.01 if xanchor == "left" else 0.99, y=0.99 if yanchor == "top" else 0.01,
                             bgcolor="rgba(255,255,255,0.8)", tracegroupgap=0)
    fig.layout.margin.b = round(bottom)
    return True


def _crossed_corners(fig: go.Figure, box_w: float, box_h: float, x_span, y_span, letter_w: float) -> set:
    """The corners of the plot (as ``legend_inside`` names them) that a legend box of ``box_w`` x ``box_h`` (fractions
    of the plot) would put over a reference line or its label: a vertical line crosses both corners on its side,
    and its label, at its top, runs ``letter_w`` per letter to the right; a horizontal line crosses the two at its
    height. (The "d = 2" line and label of Scaling ran through the legend at small d.)"""
    log_x, log_y = fig.layout.xaxis.type == "log", fig.layout.yaxis.type == "log"

    def frac(value, span, log):
        value = math.log10(value) if log and value > 0 else value
        return (value - span[0]) / ((span[1] - span[0]) or 1.0)

    crossed = set()
    labels = {round(a.x, 9): len(a.text or "") for a in fig.layout.annotations if a.xref == "x" and a.yref == "paper"}
    for shape in fig.layout.shapes:
        if shape.type != "line":
            continue
        if shape.xref == "x" and shape.yref == "paper" and shape.x0 == shape.x1:
            u = frac(shape.x0, x_span, log_x)
            place = math.log10(shape.x0) if log_x and shape.x0 > 0 else shape.x0
            reach = u + letter_w * labels.get(round(place, 9), 0)        # the label runs right from the line
            if u < box_w:
                crossed |= {("left", "top"), ("left", "bottom")}
            if u > 1 - box_w:
                crossed |= {("right", "top"), ("right", "bottom")}
            if reach > 1 - box_w:
                crossed.add(("right", "top"))
        elif shape.yref == "y" and shape.xref == "paper" and shape.y0 == shape.y1:
            v = frac(shape.y0, y_span, log_y)
            if v > 1 - box_h:
                crossed |= {("left", "top"), ("right", "top")}
            if v < box_h:
                crossed |= {("left", "bottom"), ("right", "bottom")}
    return crossed


def place_legend(fig: go.Figure, width: float = LEGEND_ROW, max_rows: int = 1) -> go.Figure:
    """Put a legend drawn below the plot at the bottom of the figure, under the x axis's tick labels and title,
    with a bottom margin that holds both. Its entries run in rows when they fit in ``max_rows`` rows of ``width``
    px (the narrowest the chart is drawn at: a row that plotly wraps further in a narrower chart would climb onto
    the axis title), else one entry per line. Changes ``fig`` in place."""
    traces = [{"name": t.name, "showlegend": t.showlegend, "type": t.type} for t in fig.data]
    layout = fig.layout.to_plotly_json()
    update = legend_placement(layout, traces, width, max_rows)
    if update is not None and not holds(layout, update):
        fig.layout.legend.update(update["legend"])
        fig.layout.margin.b = update["margin"]["b"]
    return fig
