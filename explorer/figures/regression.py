"""Figures of the Kernel regression page."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import plotly.graph_objects as go
import torch

from ..kernels import get_kernel
from .style import NORMAL, PALETTE, Style, finish

X_LABEL = "x (input, arbitrary units)"
Y_LABEL = "y (target, arbitrary units)"


def fit_figure(x: np.ndarray, y: np.ndarray, x_grid: np.ndarray, true_y: np.ndarray | None,
               estimates: Mapping[str, np.ndarray], title: str = "Nadaraya-Watson fit",
               style: Style = NORMAL) -> go.Figure:
    """Training points, the noise-free function, and one line per estimate (NaN = undefined)."""
    fig = go.Figure()
    fig.add_trace(go.Scatter(x=x, y=y, mode="markers", name="training points",
                             marker={"size": style.marker_size, "color": "rgba(90,90,90,0.55)"}))
    if true_y is not None:
        fig.add_trace(go.Scatter(x=x_grid, y=true_y, mode="lines", name="true function",
                                 line={"color": "black", "dash": "dash", "width": style.line_width}))
    for i, (label, est) in enumerate(estimates.items()):
        fig.add_trace(go.Scatter(x=x_grid, y=est, mode="lines", name=label, connectgaps=False,
                                 line={"color": PALETTE[i % len(PALETTE)], "width": style.line_width}))
    return finish(fig, title, X_LABEL, Y_LABEL, style)


def kernel_shapes_figure(kernel_names: Sequence[str], style: Style = NORMAL) -> go.Figure:
    """K(u) on u in [-3, 3] for each kernel, scaled so that K(0) = 1."""
    u = torch.linspace(-3, 3, 601, dtype=torch.float64)
    fig = go.Figure()
    for i, name in enumerate(kernel_names):
        k = get_kernel(name)
        fig.add_trace(go.Scatter(x=u.numpy(), y=k.profile(u).numpy(), mode="lines", name=k.display,
                                 line={"color": PALETTE[i % len(PALETTE)], "width": style.line_width}))
    return finish(fig, "Kernel profiles", "u = (x − xᵢ) / h (bandwidths)", "K(u)", style, height=320)


def loo_cv_figure(bandwidths: np.ndarray, scores: Mapping[str, np.ndarray], current: float,
                  optimum: float | None, silverman: float | None, style: Style = NORMAL) -> go.Figure:
    """Leave-one-out MSE against bandwidth (log x axis) with the current/optimal/Silverman h marked."""
    fig = go.Figure()
    for i, (label, s) in enumerate(scores.items()):
        s = np.where(np.isfinite(s), s, np.nan)
        fig.add_trace(go.Scatter(x=bandwidths, y=s, mode="lines+markers", name=label,
                                 marker={"size": style.marker_size * 0.6},
                                 line={"color": PALETTE[i % len(PALETTE)], "width": style.line_width}))
    marks = [("current h", current, "#444444", "solid"), ("LOO-CV optimum", optimum, "#2ca02c", "dash"),
             ("Silverman", silverman, "#ff7f0e", "dot")]
    for label, value, colour, dash in marks:
        if value is None or not np.isfinite(value):
            continue
        fig.add_vline(x=value, line={"color": colour, "dash": dash, "width": style.line_width * 0.75})
        fig.add_trace(go.Scatter(x=[None], y=[None], mode="lines", name=f"{label} = {value:.3g}",
                                 line={"color": colour, "dash": dash}))
    fig.update_xaxes(type="log")
    fig.update_yaxes(type="log")
    return finish(fig, "Leave-one-out cross-validation", "bandwidth h (units of x, log scale)",
                  "LOO mean squared error (y units², log scale)", style, height=380)
