"""Figures of the attention-weight pages (heatmap, softmax-as-kernel)."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from ..i18n import t
from .common import hover
from .regression import data_traces
from .style import NORMAL, PALETTE, Line, Style, figure


def query_row_figure(x: np.ndarray, y: np.ndarray, weights: np.ndarray, x_query: float, estimate: float,
                     x_grid: np.ndarray, true_y: np.ndarray | None, style: Style = NORMAL,
                     lang: str = "en") -> go.Figure:
    """The training data with each point's size and colour set by its weight for one query."""
    w = np.asarray(weights, dtype=float)
    wmax = w.max() if w.max() > 0 else 1.0
    traces = data_traces(x, y, x_grid, true_y, style, lang)[1:]    # the true function only
    traces.append({
        "type": "scatter", "x": x, "y": y, "mode": "markers", "name": t("fig.points_by_weight", lang),
        "marker": {"size": 4 + 26 * np.sqrt(w / wmax) * style.marker_size / 6, "color": w, "cmin": 0,
                   "colorscale": "Viridis", "colorbar": {"title": {"text": t("fig.weight", lang)}},
                   "line": {"width": 0.5, "color": "#333"}},
        "hovertemplate": hover((t("fig.x", lang), t("fig.y", lang), t("fig.weight", lang)),
                               ("%{x:.3f}", "%{y:.3f}", "%{marker.color:.4f}"), lang)})
    if np.isfinite(estimate):
        traces.append({"type": "scatter", "x": [x_query], "y": [estimate], "mode": "markers",
                       "name": t("fig.estimate", lang, value=estimate),
                       "marker": {"symbol": "star", "size": style.marker_size * 3, "color": PALETTE[1]}})
    title = t("fig.weights_of_query", lang, x=x_query)
    if not np.isfinite(estimate):
        title += t("fig.undefined", lang)
    return figure(traces, title, t("fig.x", lang), t("fig.y", lang), style, height=380,
                  lines=[Line(x_query, "", "x", PALETTE[1], "dot")])
