"""Figures of the Live training page."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np
import plotly.graph_objects as go

from ..i18n import t
from .common import heatmap_grid, lines
from .style import NORMAL, PALETTE, Line, Style, figure, line_trace

if TYPE_CHECKING:   # pandas (~0.5 s to import) loads where it is used, not at start-up
    import pandas as pd

MAX_POINTS = 1500


def _thin(df: pd.DataFrame) -> pd.DataFrame:
    """Keep at most MAX_POINTS rows (evenly spaced, last row kept) so long runs redraw fast."""
    if len(df) <= MAX_POINTS:
        return df
    idx = np.unique(np.r_[np.linspace(0, len(df) - 1, MAX_POINTS).astype(int), len(df) - 1])
    return df.iloc[idx]


def loss_figure(df: pd.DataFrame, regression: bool, style: Style = NORMAL, lang: str = "en") -> go.Figure:
    df = _thin(df)
    series = {t("fig.loss", lang): df["loss"]}
    if not regression:
        series[t("fig.accuracy", lang)] = df["accuracy"]
    title = t("fig.loss_mse", lang) if regression else t("fig.loss_ce", lang)
    y_title = t("fig.loss_mse_y", lang) if regression else t("fig.loss_ce_y", lang)
    return lines(df["step"], series, title, t("fig.step", lang), y_title, style=style, height=340)


def entropy_figure(df: pd.DataFrame, n_layers: int, n_heads: int, seq_len: int, style: Style = NORMAL,
                   lang: str = "en") -> go.Figure:
    df = _thin(df)
    dashes = ["solid", "dash", "dot", "dashdot"]
    traces = [line_trace(df["step"], df[f"entropy_l{layer}_h{h}"], t("fig.layer_head", lang, layer=layer, head=h),
                         PALETTE[h % len(PALETTE)], style, dash=dashes[layer % 4])
              for layer in range(n_layers) for h in range(n_heads)]
    refs = [Line(math.log(seq_len), t("fig.log_t", lang, value=f"{math.log(seq_len):.2f}"), "y", dash="dot"),
            Line(0.1, t("fig.collapse_line", lang), "y", "#d62728", "dot")]
    return figure(traces, t("fig.entropy_title", lang), t("fig.step", lang), t("fig.entropy_nats", lang), style,
                  height=380, lines=refs)


def attention_maps_figure(maps: list[np.ndarray], style: Style = NORMAL, lang: str = "en") -> go.Figure:
    """Layer × head grid of attention maps on the held-out example, one colour scale (0 to 1)."""
    n_layers, n_heads = len(maps), maps[0].shape[0]
    mats = [maps[layer][h] for layer in range(n_layers) for h in range(n_heads)]
    titles = [t("fig.layer_head", lang, layer=layer, head=h) for layer in range(n_layers) for h in range(n_heads)]
    return heatmap_grid(mats, titles, None, None, t("fig.maps_title", lang), t("fig.key_position", lang),
                        t("fig.query_position", lang), cols=n_heads, zmax=1.0, style=style,
                        height=max(300, 260 * n_layers), colorbar_title=t("fig.weight", lang))


def icl_figure(x: np.ndarray, y: np.ndarray, is_query: np.ndarray, prediction: np.ndarray,
               true_fn, style: Style = NORMAL, lang: str = "en") -> go.Figure:
    """In-context regression: context pairs, the model's predictions at the queries, the true curve."""
    grid = np.linspace(-3, 3, 200)
    traces = [line_trace(grid, true_fn(grid), t("fig.true_function", lang), "black", style, dash="dash"),
              {"type": "scatter", "x": x[~is_query], "y": y[~is_query], "mode": "markers",
               "name": t("fig.context", lang),
               "marker": {"size": style.marker_size, "color": "rgba(90,90,90,0.6)"}},
              {"type": "scatter", "x": x[is_query], "y": prediction[is_query], "mode": "markers",
               "name": t("fig.prediction", lang),
               "marker": {"size": style.marker_size * 1.8, "color": "#d62728", "symbol": "star"}}]
    return figure(traces, t("fig.icl_title", lang), t("fig.x", lang), t("fig.y", lang), style, height=360)


def kv_timing_figure(rows, style: Style = NORMAL, lang: str = "en") -> go.Figure:
    import pandas as pd
    df = pd.DataFrame(rows, columns=["length", "cache", "no_cache", "diff"])
    return lines(df["length"], {t("fig.with_cache", lang): df["cache"], t("fig.no_cache", lang): df["no_cache"]},
                 t("fig.kv_title", lang), t("fig.kv_x", lang), t("fig.kv_y", lang), mode="lines+markers",
                 style=style, height=340)
