"""Figures of the Live training page."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from .common import heatmap_grid, lines
from .style import NORMAL, PALETTE, Line, Style, figure, line_trace

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
    dashes = ["solid", "dash", "dot", "dashdot"]
    traces = [line_trace(df["step"], df[f"entropy_l{layer}_h{h}"], f"layer {layer}, head {h}",
                         PALETTE[h % len(PALETTE)], style, dash=dashes[layer % 4])
              for layer in range(n_layers) for h in range(n_heads)]
    refs = [Line(math.log(seq_len), f"log T = {math.log(seq_len):.2f} (uniform over all T keys)", "y", dash="dot"),
            Line(0.1, "0.1 nats: collapse threshold", "y", "#d62728", "dot")]
    return figure(traces, "Per-head attention entropy (mean over queries)", "step", "entropy (nats)", style,
                  height=380, lines=refs)


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
    grid = np.linspace(-3, 3, 200)
    traces = [line_trace(grid, true_fn(grid), "true function", "black", style, dash="dash"),
              {"type": "scatter", "x": x[~is_query], "y": y[~is_query], "mode": "markers", "name": "context (xᵢ, yᵢ)",
               "marker": {"size": style.marker_size, "color": "rgba(90,90,90,0.6)"}},
              {"type": "scatter", "x": x[is_query], "y": prediction[is_query], "mode": "markers",
               "name": "model's prediction",
               "marker": {"size": style.marker_size * 1.8, "color": "#d62728", "symbol": "star"}}]
    return figure(traces, "In-context regression on the held-out example", "x (input units)", "y (target units)",
                  style, height=360)


def kv_timing_figure(rows, style: Style = NORMAL) -> go.Figure:
    df = pd.DataFrame(rows, columns=["length", "cache", "no_cache", "diff"])
    return lines(df["length"], {"with KV cache": df["cache"], "recompute everything": df["no_cache"]},
                 "Time per generated token", "sequence length (tokens)", "milliseconds per token",
                 mode="lines+markers", style=style, height=340)
