"""Figures of the Scaling page."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from ..i18n import t
from .style import NORMAL, PALETTE, Style, figure


def logit_histogram(unscaled: np.ndarray, scaled: np.ndarray, d: int, style: Style = NORMAL,
                    lang: str = "en") -> go.Figure:
    pairs = ((t("fig.unscaled", lang), unscaled), (t("fig.scaled", lang), scaled))
    traces = [{"type": "histogram", "x": values, "name": label, "opacity": 0.6, "histnorm": "probability density",
               "nbinsx": 80, "marker": {"color": PALETTE[i]}} for i, (label, values) in enumerate(pairs)]
    fig = figure(traces, t("fig.hist_title", lang, d=d, n=f"{len(unscaled):,}"), t("fig.logit_value", lang),
                 t("fig.density", lang), style, layout={"barmode": "overlay", "showlegend": True})
    return fig
