"""Figures of the Kernel regression page."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import plotly.graph_objects as go
import torch

from ..i18n import t
from ..kernels import get_kernel
from .style import NORMAL, PALETTE, Line, Style, figure, line_trace, series_trace


def data_traces(x: np.ndarray, y: np.ndarray, x_grid: np.ndarray, true_y: np.ndarray | None,
                style: Style, lang: str = "en") -> list[dict]:
    traces = [{"type": "scatter", "x": x, "y": y, "mode": "markers", "name": t("fig.training_points", lang),
               "marker": {"size": style.marker_size, "color": "rgba(90,90,90,0.55)"}}]
    if true_y is not None:
        traces.append(line_trace(x_grid, true_y, t("fig.true_function", lang), "black", style, dash="dash"))
    return traces


def fit_figure(x: np.ndarray, y: np.ndarray, x_grid: np.ndarray, true_y: np.ndarray | None,
               estimates: Mapping[str, np.ndarray], title: str = "Nadaraya-Watson fit",
               style: Style = NORMAL, lang: str = "en", axes: tuple[str, str] | None = None) -> go.Figure:
    """Training points, the noise-free function, and one line per estimate (NaN = undefined); ``axes``: the
    axis titles (an upload's column names), else the built-in datasets' x and y."""
    traces = data_traces(x, y, x_grid, true_y, style, lang)
    for i, (label, est) in enumerate(estimates.items()):
        traces.append(series_trace(x_grid, est, label, i, style, connectgaps=False))
    x_title, y_title = axes or (t("fig.x", lang), t("fig.y", lang))
    return figure(traces, title, x_title, y_title, style)


def kernel_shapes_figure(kernel_names: Sequence[str], style: Style = NORMAL, lang: str = "en") -> go.Figure:
    """K(u) on u in [-3, 3] for each kernel (profiles, K(0) = 1)."""
    u = torch.linspace(-3, 3, 601, dtype=torch.float64)
    traces = []
    for i, name in enumerate(kernel_names):
        k = get_kernel(name)
        traces.append(series_trace(u.numpy(), k.profile(u).numpy(), t(f"kernel.{name}", lang), i, style))
    return figure(traces, t("fig.kernel_profiles", lang), t("fig.u", lang), "K(u)", style, height=320)


def loo_cv_figure(bandwidths: np.ndarray, scores: Mapping[str, np.ndarray], current: float,
                  optimum: float | None, silverman: float | None, style: Style = NORMAL,
                  lang: str = "en", x_by_series: Mapping[str, np.ndarray] | None = None,
                  answer: Mapping | None = None, flat: float | None = None) -> go.Figure:
    """Leave-one-out MSE against bandwidth (log axes) with the current/optimal/Silverman h marked; ``flat``: the
    curve is flat below this h (``bandwidth.flat_below``), which is marked instead of an optimum it does not have.

    ``x_by_series`` draws a series against its own x values (kernels compared at equal effective width,
    each against the first kernel's equivalent bandwidth); ``answer`` (``lessons.loo_question``): the bandwidths a
    question offered, drawn at their scores, the lowest as a star labelled as the answer."""
    traces = []
    for i, (label, s) in enumerate(scores.items()):
        s = np.where(np.isfinite(s), s, np.nan)
        x = bandwidths if x_by_series is None else x_by_series[label]
        traces.append(series_trace(x, s, label, i, style, mode="lines+markers"))
    marks = [(t("fig.current_h", lang), current, "#444444", "solid"),
             (t("fig.loo_flat", lang), flat, PALETTE[5], "dash") if flat is not None else
             (t("fig.loo_optimum", lang), optimum, PALETTE[5], "dash"),
             (t("fig.silverman", lang), silverman, PALETTE[4], "dot")]
    refs = []
    for label, value, colour, dash in marks:
        if value is None or not np.isfinite(value):
            continue
        refs.append(Line(value, "", "x", colour, dash))
        traces.append({"type": "scatter", "x": [None], "y": [None], "mode": "lines",
                       "name": f"{label} = {value:.3g}", "line": {"color": colour, "dash": dash}})
    annotations = []
    if answer is not None:
        best, hs, scores = answer["best"], list(answer["h"]), np.asarray(answer["scores"], dtype=float)
        shown = np.isfinite(scores)
        traces.append({"type": "scatter", "x": [h for h, ok in zip(hs, shown, strict=True) if ok],
                       "y": scores[shown], "mode": "markers", "name": t("fig.offered", lang), "showlegend": False,
                       "marker": {"size": style.marker_size * 1.6, "color": "rgba(0,0,0,0)",
                                  "line": {"width": 2, "color": "#111111"}}})
        traces.append({"type": "scatter", "x": [hs[best]], "y": [scores[best]], "mode": "markers",
                       "name": t("fig.answer", lang), "showlegend": False,
                       "marker": {"symbol": "star", "size": style.marker_size * 3, "color": PALETTE[5],
                                  "line": {"width": 1, "color": "#111111"}}})
        annotations.append({"x": np.log10(hs[best]), "y": np.log10(scores[best]), "text": t("fig.answer", lang),
                            "showarrow": True, "arrowhead": 2, "ax": 0, "ay": -40,
                            "font": {"size": style.font_size, "color": "#111111"}})
    x_title = t("fig.loo_x" if x_by_series is None else "fig.loo_x_same", lang)
    fig = figure(traces, t("fig.loo_title", lang), x_title, t("fig.loo_y", lang), style,
                 height=380, lines=refs, log_x=True, log_y=True)
    if annotations:
        fig.layout.annotations = [*fig.layout.annotations, *annotations]
    return fig
