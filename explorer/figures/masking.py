"""Figures of the Masking page."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go
from plotly.colors import sample_colorscale

from ..i18n import t
from .common import heatmap, heatmap_grid
from .dark import ON_DATA
from .ink import luma
from .style import BAR_PATTERNS, NORMAL, PALETTE, Style, figure

# how each masking mode is drawn in the line charts: "pre" (correct) first, wide and pale, so that the modes equal
# to it, drawn over it with their own dash and marker, never hide it and it never hides them
MODE_STYLE = {
    "pre": {"color": PALETTE[5], "dash": "solid", "width": 3.0, "symbol": "circle-open", "size": 2.4, "opacity": 0.55},
    "post": {"color": PALETTE[1], "dash": "solid", "width": 1.0, "symbol": "x", "size": 1.1, "opacity": 1.0},
    "post_renorm": {"color": PALETTE[0], "dash": "dash", "width": 1.0, "symbol": "diamond", "size": 1.0,
                    "opacity": 1.0},
    "multiply_logits": {"color": PALETTE[2], "dash": "dot", "width": 1.0, "symbol": "square", "size": 1.0,
                        "opacity": 1.0},
}
MARK_COLOURS = {"weights": "#ff4b4b", "gradient": "#3a3a3a"}    # red on viridis; dark grey on the red-blue map
LIGHT_MARK = "#f0f0f0"                                           # on the red-blue map's darkest cells
# plotly.js's own "RdBu" (blue below zero, grey at it, red above), written out: plotly.py's "RdBu" is another scale
GRADIENT_SCALE = [[0.0, "rgb(5,10,172)"], [0.35, "rgb(106,137,247)"], [0.5, "rgb(190,190,190)"],
                  [0.6, "rgb(220,170,132)"], [0.7, "rgb(230,145,90)"], [1.0, "rgb(178,10,28)"]]


def masked_marks(mask: np.ndarray, style: Style = NORMAL, showlegend: bool = True, lang: str = "en",
                 on: str = "weights", cells: Sequence[str] | None = None) -> dict:
    """A thin × on every masked cell of a heatmap (True = may attend), smaller as the cells get smaller so that
    the marks never cover what the cells show; red on a weight map, dark grey on a gradient map (``on``), light
    grey on the cells whose colour (``cells``, row by row) is dark; in the dark theme too (they sit on the cells,
    not on the page)."""
    mask = np.asarray(mask, dtype=bool)
    qi, kj = np.nonzero(~mask)
    shrink = min(1.0, (8 / max(mask.shape)) ** 0.75)
    colour = MARK_COLOURS[on]
    if cells is not None:           # each cell's own colour, row by row: whichever ink stands out more from it
        middle = (luma(colour) + luma(LIGHT_MARK)) / 2
        colour = [LIGHT_MARK if luma(cells[q * mask.shape[1] + k]) < middle else colour
                  for q, k in zip(qi, kj, strict=True)]
    return {"type": "scatter", "x": kj, "y": qi, "mode": "markers", "name": t("fig.masked", lang),
            "showlegend": showlegend, "hoverinfo": "skip", "meta": ON_DATA,
            "marker": {"symbol": "x-thin", "size": 9 * style.marker_size / 6 * shrink,
                       "line": {"width": 1.5 * shrink ** 0.5, "color": colour}, "color": colour}}


def mode_lines(x: Sequence, series: dict[str, Sequence], title: str, x_title: str, y_title: str,
               style: Style = NORMAL, height: int = 360, lang: str = "en") -> go.Figure:
    """One line per masking mode in ``MODE_STYLE``'s order and look (series keyed by mode name)."""
    traces = []
    for mode, look in MODE_STYLE.items():
        if mode in series:
            traces.append({"type": "scatter", "x": x, "y": series[mode], "mode": "lines+markers",
                           "name": t(f"modename.{mode}", lang),
                           "opacity": look["opacity"],
                           "line": {"color": look["color"], "dash": look["dash"],
                                    "width": style.line_width * look["width"]},
                           "marker": {"symbol": look["symbol"], "size": style.marker_size * look["size"],
                                      "color": look["color"], "line": {"width": 1.5, "color": look["color"]}}})
    fig = figure(traces, title, x_title, y_title, style, height)
    positions = np.asarray(x, dtype=float)
    if len(positions) <= 12 and np.all(positions == np.round(positions)):     # query positions: integer ticks
        fig.update_xaxes(tick0=0, dtick=1)
    return fig


def masked_pair(left: np.ndarray, right: np.ndarray, mask: np.ndarray, titles: tuple[str, str],
                style: Style = NORMAL, lang: str = "en") -> go.Figure:
    """Two weight heatmaps on one colour scale; masked cells crossed out."""
    fig = heatmap_grid([left, right], list(titles), None, None, t("fig.mask_pair_title", lang),
                       t("fig.key_pos", lang), t("fig.query_pos", lang), cols=2, style=style, height=430,
                       colorbar_title=t("fig.weight", lang),
                       extra_traces=[[masked_marks(mask, style, True, lang)], [masked_marks(mask, style, False, lang)]],
                       lang=lang)
    fig.update_layout(showlegend=True, legend_y=-0.3, margin_b=120, height=fig.layout.height + 50)
    return fig


def gradient_heatmap(grad: np.ndarray, mask: np.ndarray, title: str, style: Style = NORMAL,
                     lang: str = "en") -> go.Figure:
    lim = float(np.abs(grad).max()) or 1.0
    cells = sample_colorscale(GRADIENT_SCALE, list((np.ravel(grad) + lim) / (2 * lim)))
    return heatmap(grad, None, None, title, t("fig.key_pos", lang), t("fig.query_pos", lang),
                   colorbar_title=t("fig.gradient", lang),
                   colorscale=GRADIENT_SCALE, zmin=-lim, zmax=lim, height=380, style=style,
                   extra_traces=[masked_marks(mask, style, False, lang, on="gradient", cells=cells)], lang=lang)


def leak_bars(modes: Sequence[str], leaks: dict[str, Sequence[float]], tol: float, style: Style = NORMAL,
              lang: str = "en") -> go.Figure:
    """Grouped bars: for each mode, the leak through the masked key and through the masked value.
    A leak below ``tol`` is drawn as no bar (height 0) and labelled "0"."""
    looks = {"key": (PALETTE[1], BAR_PATTERNS[0]), "value": (PALETTE[0], BAR_PATTERNS[1])}
    # A name with a gloss in brackets ("pre（softmax 前屏蔽）") puts the gloss on a second line of its tick label.
    ticks = [t(f"modename.{m}", lang).replace("（", "<br>（", 1) for m in modes]
    traces = []
    for channel, values in leaks.items():
        shown = [v if v >= tol else 0.0 for v in values]
        traces.append({"type": "bar", "x": ticks, "y": shown,
                       "name": t(f"fig.leak_{channel}", lang),
                       "marker": {"color": looks[channel][0], "pattern": {"shape": looks[channel][1]}},
                       "text": [f"{v:.2g}" if v else "0" for v in shown],
                       "textposition": "outside"})
    fig = figure(traces, t("fig.leak_title", lang), t("fig.leak_x", lang), t("fig.leak_y", lang), style,
                 height=380)
    fig.update_layout(barmode="group", showlegend=True, legend={"orientation": "h", "y": -0.3, "x": 0.0},
                      margin_b=110, height=fig.layout.height + 40)
    return fig
