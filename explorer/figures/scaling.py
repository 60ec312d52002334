"""Figures of the Scaling page."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from .style import NORMAL, PALETTE, Style, figure


def logit_histogram(unscaled: np.ndarray, scaled: np.ndarray, d: int, style: Style = NORMAL) -> go.Figure:
    traces = [{"type": "histogram", "x": values, "name": label, "opacity": 0.6, "histnorm": "probability density",
               "nbinsx": 80, "marker": {"color": PALETTE[i]}}
              for i, (label, values) in enumerate((("unscaled q·k", unscaled), ("scaled q·k/√d", scaled)))]
    fig = figure(traces, f"Logits at d = {d} ({len(unscaled):,} samples)", "logit value", "probability density",
                 style, layout={"barmode": "overlay", "showlegend": True})
    return fig
