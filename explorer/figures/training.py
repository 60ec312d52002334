"""Figures of the Live training page."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from .common import heatmap_grid, lines
from .style import NORMAL, PALETTE, Style, finish

MAX_POINTS = 1500


def _thin(df: pd.DataFrame) -> pd.DataFrame:
    """Keep at most MAX_POINTS rows (evenly spaced, last row kept) so long runs redraw fast."""
    if len(df) <= MAX_POINTS:
        return df
    idx = np.unique(np.r_[np.linspace(0, len(df) - 1, MAX_POINTS).astype(int), len(df) - 1])
    return df.iloc[idx]


def loss_figure(df: pd.DataFrame, regression: bool, style: Style = NORMAL) -> go.Figure:
    df = _thin(df)
    series = {"loss": df["loss"]}
    if not regression:
        series["accuracy"] = df["accuracy"]
    title = "Training loss (MSE)" if regression else "Training loss (cross-entropy) and accuracy"
    y_title = "MSE (y units²)" if regression else "loss (nats) · accuracy (fraction)"
    return lines(df["step"], series, title, "step", y_title, style=style, height=340)


def entropy_figure(df: pd.DataFrame, n_layers: int, n_heads: int, seq_len: int, style: Style = NORMAL) -> go.Figure:
    df = _thin(df)
    fig = go.Figure()
    dashes = ["solid", "dash", "dot", "dashdot"]
    for layer in range(n_layers):
        for h in range(n_heads):
            fig.add_trace(go.Scatter(x=df["step"], y=df[f"entropy_l{layer}_h{h}"], mode="lines",
                                     name=f"layer {layer}, head {h}",
                                     line={"color": PALETTE[h % len(PALETTE)], "dash": dashes[layer % 4],
                                           "width": style.line_width}))
    fig.add_hline(y=math.log(seq_len), line={"color": "#555", "dash": "dot"},
                  annotation_text=f"log T = {math.log(seq_len):.2f} (uniform over all T keys)")
    fig.add_hline(y=0.1, line={"color": "#d62728", "dash": "dot", "width": 1},
                  annotation_text="0.1 nats: collapse threshold", annotation_position="bottom right")
    return finish(fig, "Per-head attention entropy (mean over queries)", "step", "entropy (nats)", style, height=380)


def attention_maps_figure(maps: list[np.ndarray], style: Style = NORMAL) -> go.Figure:
    """Layer × head grid of attention maps on the held-out example, one colour scale (0 to 1)."""
    n_layers, n_heads = len(maps), maps[0].shape[0]
    mats = [maps[layer][h] for layer in range(n_layers) for h in range(n_heads)]
    titles = [f"layer {layer}, head {h}" for layer in range(n_layers) for h in range(n_heads)]
    return heatmap_grid(mats, titles, None, None, "Attention maps on a fixed held-out example",
                        "key position", "query position", cols=n_heads, zmax=1.0, style=style,
                        height=max(300, 260 * n_layers))


def icl_figure(x: np.ndarray, y: np.ndarray, is_query: np.ndarray, prediction: np.ndarray,
               true_fn, style: Style = NORMAL) -> go.Figure:
    """In-context regression: context pairs, the model's predictions at the queries, the true curve."""
    fig = go.Figure()
    grid = np.linspace(-3, 3, 200)
    fig.add_trace(go.Scatter(x=grid, y=true_fn(grid), mode="lines", name="true function",
                             line={"color": "black", "dash": "dash", "width": style.line_width * 0.6}))
    fig.add_trace(go.Scatter(x=x[~is_query], y=y[~is_query], mode="markers", name="context (xᵢ, yᵢ)",
                             marker={"size": style.marker_size, "color": "rgba(90,90,90,0.6)"}))
    fig.add_trace(go.Scatter(x=x[is_query], y=prediction[is_query], mode="markers", name="model's prediction",
                             marker={"size": style.marker_size * 1.8, "color": "#d62728", "symbol": "star"}))
    return finish(fig, "In-context regression on the held-out example", "x (input units)", "y (target units)",
                  style, height=360)


def kv_timing_figure(rows, style: Style = NORMAL) -> go.Figure:
    df = pd.DataFrame(rows, columns=["length", "cache", "no_cache", "diff"])
    return lines(df["length"], {"with KV cache": df["cache"], "recompute everything": df["no_cache"]},
                 "Time per generated token", "sequence length (tokens)", "milliseconds per token",
                 mode="lines+markers", style=style, height=340)
