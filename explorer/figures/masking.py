"""Figures of the Masking page."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from .common import heatmap_grid
from .style import NORMAL, Style


def masked_pair(left: np.ndarray, right: np.ndarray, mask: np.ndarray, titles: tuple[str, str],
                style: Style = NORMAL) -> go.Figure:
    """Two weight heatmaps on one colour scale; masked cells crossed out with a red ×."""
    fig = heatmap_grid([left, right], list(titles), None, None,
                       "Attention weights (rows: query position, columns: key position)",
                       "key position j", "query position i", cols=2, style=style, height=430)
    for col in (1, 2):
        mark_masked(fig, mask, row=1, col=col, showlegend=col == 1, style=style)
    fig.update_layout(legend={"orientation": "h", "y": -0.18, "x": 0.0})
    return fig


def mark_masked(fig: go.Figure, mask: np.ndarray, row: int | None = None, col: int | None = None,
                showlegend: bool = True, style: Style = NORMAL) -> go.Figure:
    """Cross out the masked cells of a heatmap with a red ×."""
    qi, kj = np.nonzero(~np.asarray(mask, dtype=bool))
    fig.add_trace(go.Scatter(x=kj, y=qi, mode="markers", name="masked (may not attend)",
                             showlegend=showlegend, hoverinfo="skip",
                             marker={"symbol": "x-thin", "size": 9 * style.marker_size / 6,
                                     "line": {"width": 1.5, "color": "#ff4b4b"}, "color": "#ff4b4b"}),
                  row=row, col=col)
    return fig
