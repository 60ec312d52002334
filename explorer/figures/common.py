"""Generic figure builders shared by the pages: heatmaps, heatmap grids, line charts."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from .style import HEAT_SCALE, NORMAL, PALETTE, Style, finish

MAX_DISPLAY_CELLS = 250_000


def downsample(z: np.ndarray, rows: np.ndarray, cols: np.ndarray, max_cells: int = MAX_DISPLAY_CELLS):
    """Block-average a matrix (and its axis coordinates) until it has at most ``max_cells`` cells.

    Returns ``(z, rows, cols, factor)``; ``factor`` is 1 when nothing was done. Only the picture is
    reduced: callers compute on the full matrix.
    """
    z = np.asarray(z, dtype=float)
    factor = 1
    while z.shape[0] * z.shape[1] > max_cells:
        factor *= 2
        z = _pool(z, 2)
        rows, cols = _pool1(rows), _pool1(cols)
    return z, rows, cols, factor


def _pool(z: np.ndarray, f: int) -> np.ndarray:
    m, n = (z.shape[0] // f) * f, (z.shape[1] // f) * f
    core = z[:m, :n].reshape(m // f, f, n // f, f).mean(axis=(1, 3))
    return core


def _pool1(a: np.ndarray) -> np.ndarray:
    m = (len(a) // 2) * 2
    return np.asarray(a[:m], dtype=float).reshape(-1, 2).mean(axis=1)


def heatmap(z: np.ndarray, x: Sequence | None, y: Sequence | None, title: str, x_title: str, y_title: str,
            zmax: float | None = None, colorbar_title: str = "weight", style: Style = NORMAL,
            height: int | None = None, colorscale: str = HEAT_SCALE, zmin: float = 0.0,
            reverse_y: bool = True) -> go.Figure:
    """A single heatmap; colour scale from ``zmin`` (0 for weights) with a titled colour bar."""
    z = np.asarray(z, dtype=float)
    fig = go.Figure(go.Heatmap(z=z, x=x, y=y, zmin=zmin, zmax=zmax if zmax is not None else np.nanmax(z),
                               colorscale=colorscale, colorbar={"title": {"text": colorbar_title}},
                               hovertemplate="key %{x}<br>query %{y}<br>value %{z:.4g}<extra></extra>"))
    if reverse_y:
        fig.update_yaxes(autorange="reversed")
    return finish(fig, title, x_title, y_title, style, height=height)


def heatmap_grid(mats: Sequence[np.ndarray], titles: Sequence[str], x: Sequence | None, y: Sequence | None,
                 title: str, x_title: str, y_title: str, cols: int | None = None,
                 zmax: float | None = None, colorbar_title: str = "weight", style: Style = NORMAL,
                 height: int | None = None) -> go.Figure:
    """Small multiples on one shared colour scale (0 to the largest value of all panels)."""
    n = len(mats)
    cols = cols or n
    rows = -(-n // cols)
    zmax = zmax if zmax is not None else max(float(np.nanmax(m)) for m in mats)
    fig = make_subplots(rows=rows, cols=cols, subplot_titles=list(titles),
                        horizontal_spacing=0.04, vertical_spacing=0.12)
    for i, m in enumerate(mats):
        fig.add_trace(go.Heatmap(z=np.asarray(m, dtype=float), x=x, y=y, coloraxis="coloraxis",
                                 hovertemplate="key %{x}<br>query %{y}<br>value %{z:.4g}<extra></extra>"),
                      row=i // cols + 1, col=i % cols + 1)
    fig.update_layout(coloraxis={"colorscale": HEAT_SCALE, "cmin": 0.0, "cmax": zmax,
                                 "colorbar": {"title": {"text": colorbar_title}}})
    fig.update_yaxes(autorange="reversed")
    finish(fig, title, "", "", style, height=height or max(300, 280 * rows))
    for c in range(1, cols + 1):
        fig.update_xaxes(title_text=x_title, row=rows, col=c)
    for r in range(1, rows + 1):
        fig.update_yaxes(title_text=y_title, row=r, col=1)
    return fig


def lines(x: Sequence, series: Mapping[str, Sequence], title: str, x_title: str, y_title: str,
          log_x: bool = False, log_y: bool = False, hlines: Sequence[tuple[float, str]] = (),
          vlines: Sequence[tuple[float, str]] = (), mode: str = "lines", style: Style = NORMAL,
          height: int | None = None, dashes: Mapping[str, str] | None = None,
          colors: Mapping[str, str] | None = None) -> go.Figure:
    """One line per series, with optional labelled horizontal/vertical reference lines."""
    fig = go.Figure()
    for i, (label, y) in enumerate(series.items()):
        fig.add_trace(go.Scatter(x=x, y=y, mode=mode, name=label,
                                 marker={"size": style.marker_size * 0.7},
                                 line={"color": (colors or {}).get(label, PALETTE[i % len(PALETTE)]),
                                       "width": style.line_width,
                                       "dash": (dashes or {}).get(label, "solid")}))
    for j, (value, label) in enumerate(hlines):
        fig.add_hline(y=value, line={"color": "#555", "dash": "dot", "width": style.line_width * 0.75},
                      annotation_text=label, annotation_position="top left" if j % 2 == 0 else "bottom left")
    for value, label in vlines:
        fig.add_vline(x=value, line={"color": "#555", "dash": "dash", "width": style.line_width * 0.75},
                      annotation_text=label, annotation_position="top right")
    if log_x:
        fig.update_xaxes(type="log")
    if log_y:
        fig.update_yaxes(type="log")
    return finish(fig, title, x_title, y_title, style, height=height)
