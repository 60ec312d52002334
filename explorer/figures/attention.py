"""Figures of the attention-weight pages (heatmap, softmax-as-kernel)."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from .regression import X_LABEL, Y_LABEL, data_traces
from .style import NORMAL, Line, Style, figure


def query_row_figure(x: np.ndarray, y: np.ndarray, weights: np.ndarray, x_query: float, estimate: float,
                     x_grid: np.ndarray, true_y: np.ndarray | None, style: Style = NORMAL) -> go.Figure:
    """The training data with each point's size and colour set by its weight for one query."""
    w = np.asarray(weights, dtype=float)
    wmax = w.max() if w.max() > 0 else 1.0
    traces = data_traces(x, y, x_grid, true_y, style)[1:]          # the true function only
    traces.append({
        "type": "scatter", "x": x, "y": y, "mode": "markers", "name": "training points (size, colour = weight)",
        "marker": {"size": 4 + 26 * np.sqrt(w / wmax) * style.marker_size / 6, "color": w, "cmin": 0,
                   "colorscale": "Viridis", "colorbar": {"title": {"text": "weight"}},
                   "line": {"width": 0.5, "color": "#333"}},
        "hovertemplate": "x=%{x:.3f}<br>y=%{y:.3f}<br>weight=%{marker.color:.4f}<extra></extra>"})
    if np.isfinite(estimate):
        traces.append({"type": "scatter", "x": [x_query], "y": [estimate], "mode": "markers",
                       "name": f"estimate = {estimate:.3f}",
                       "marker": {"symbol": "star", "size": style.marker_size * 3, "color": "#d62728"}})
    title = f"Weights of the query x = {x_query:.3f}"
    if not np.isfinite(estimate):
        title += " (no training point within h: undefined)"
    return figure(traces, title, X_LABEL, Y_LABEL, style, height=380,
                  lines=[Line(x_query, "", "x", "#d62728", "dot")])
