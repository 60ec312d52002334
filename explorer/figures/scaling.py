"""Figures of the Scaling page."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from ..i18n import t
from .common import hover
from .style import BAR_PATTERNS, NORMAL, PALETTE, SYMBOLS, Style, figure


def logit_histogram(unscaled: np.ndarray, scaled: np.ndarray, d: int, style: Style = NORMAL,
                    lang: str = "en", bins: int = 80) -> go.Figure:
    """Each sample's density on ``bins`` equal bins over its own range, binned here (a bar of the density per bin),
    so the browser gets 2 × ``bins`` numbers instead of every sample."""
    traces, tip = [], hover((t("fig.logit_value", lang), t("fig.density", lang)), ("%{x:.3g}", "%{y:.3g}"), lang)
    for i, (label, values) in enumerate(((t("fig.unscaled", lang), unscaled), (t("fig.scaled", lang), scaled))):
        lo, hi = float(values.min()), float(values.max())
        edges = np.linspace(lo, hi if hi > lo else lo + 1.0, bins + 1)
        traces.append({"type": "bar", "x": ((edges[:-1] + edges[1:]) / 2).astype(np.float32),
                       "y": np.histogram(values, edges, density=True)[0].astype(np.float32),
                       "width": float(edges[1] - edges[0]), "name": label, "opacity": 0.6,
                       "marker": {"color": PALETTE[i], "pattern": {"shape": BAR_PATTERNS[i]}},
                       "hovertemplate": tip})
    fig = figure(traces, t("fig.hist_title", lang, d=d, n=len(unscaled)), t("fig.logit_value", lang),
                 t("fig.density", lang), style, layout={"barmode": "overlay", "bargap": 0, "showlegend": True})
    return fig


def regime_figure(curve, unscaled, scaled, style: Style = NORMAL, lang: str = "en") -> go.Figure:
    """The softmax Jacobian norm against the logit scale (a line), with where unscaled q·k lands for each
    d (s = its logit std) and where scaled q·k lands (s ≈ 1) marked on it."""
    traces = [{"type": "scatter", "x": curve["scale"], "y": curve["softmax_grad_norm"], "mode": "lines",
               "name": t("sc.regime_curve", lang), "line": {"color": "#555", "width": style.line_width}}]
    for i, (label, table) in enumerate(((t("sc.unscaled", lang), unscaled), (t("sc.scaled", lang), scaled))):
        traces.append({"type": "scatter", "x": table["logit_std"], "y": table["softmax_grad_norm"],
                       "mode": "markers+text" if i == 0 else "markers", "name": label,
                       "text": [f"d={d}" for d in table["d"]] if i == 0 else None, "textposition": "top center",
                       "marker": {"size": style.marker_size * 1.4, "color": PALETTE[i], "symbol": SYMBOLS[i]}})
    return figure(traces, t("sc.regime_title", lang), t("sc.regime_x", lang), t("sc.grad_axis", lang), style,
                  height=420, log_x=True)
