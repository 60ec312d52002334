"""Figures of the Live training page."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np
import plotly.graph_objects as go

from ..i18n import t
from ..training.heads import metric_key
from . import common
from .common import heatmap_grid, lines
from .placement import wrap_text
from .style import NORMAL, PALETTE, Line, Style, figure, line_trace, log_ticks, series_look

if TYPE_CHECKING:   # pandas (~0.5 s to import) loads where it is used, not at start-up
    import pandas as pd  # pandas: kept off the first page's imports (cold start)

MAX_POINTS = 500


def _thin(df: pd.DataFrame) -> pd.DataFrame:
    """Keep at most MAX_POINTS rows (evenly spaced, last row kept) so long runs redraw fast."""
    if len(df) <= MAX_POINTS:
        return df
    idx = np.unique(np.r_[np.linspace(0, len(df) - 1, MAX_POINTS).astype(int), len(df) - 1])
    return df.iloc[idx]


def loss_figure(df: pd.DataFrame, regression: bool, style: Style = NORMAL, lang: str = "en",
                noise_floor: float | None = None) -> go.Figure:
    """Loss (and accuracy) against step; ``noise_floor`` draws the best MSE any predictor can reach."""
    df = _thin(df)
    series = {t("fig.loss", lang): df["loss"]}
    if not regression:
        series[t("fig.accuracy", lang)] = df["accuracy"]
    title = t("fig.loss_mse", lang) if regression else t("fig.loss_ce", lang)
    y_title = t("fig.loss_mse_y", lang) if regression else t("fig.loss_ce_y", lang)
    hlines = [(noise_floor, t("fig.noise_floor", lang, value=noise_floor))] if noise_floor else []
    return lines(df["step"], series, title, t("fig.step", lang), y_title, style=style, height=340, hlines=hlines)


def entropy_figure(df: pd.DataFrame, n_layers: int, n_heads: int, ceiling: float, style: Style = NORMAL,
                   lang: str = "en") -> go.Figure:
    """Per-head mean entropy against step, with the ceiling of uniform rows over the keys each row may
    see (``Task.entropy_ceiling``: log T bidirectional, log(T!)/T causal) and the collapse threshold."""
    df = _thin(df)
    dashes = ["solid", "dash", "dot", "dashdot"]
    traces = [line_trace(df["step"], df[metric_key("entropy", layer, h)],
                         t("fig.layer_head", lang, layer=layer, head=h), series_look(h)["color"], style,
                         dash=dashes[layer % 4], symbol=series_look(h)["symbol"])
              for layer in range(n_layers) for h in range(n_heads)]
    refs = [Line(ceiling, t("fig.ceiling", lang, value=ceiling), "y", dash="dot"),
            Line(0.1, t("fig.collapse_line", lang), "y", PALETTE[1], "dot")]
    return figure(traces, t("fig.entropy_title", lang), t("fig.step", lang), t("fig.entropy_nats", lang), style,
                  height=380, lines=refs)


def attention_maps_figure(maps: list[np.ndarray], style: Style = NORMAL, lang: str = "en",
                          x_title: str | None = None, y_title: str | None = None,
                          block: tuple[int, int, int, int] | None = None,
                          layers: Sequence[int] | None = None) -> go.Figure:
    """Layer × head grid of attention maps on the held-out example, one colour scale (0 to 1), square cells;
    ``block`` = (first query, last query, first key, last key) is outlined on every map (the induction task's
    repeat over its first copy); ``layers``: only these layers' rows (a projector's one row, picked on the page)."""
    layers = list(range(len(maps))) if layers is None else list(layers)
    n_heads = maps[0].shape[0]
    mats = [maps[layer][h] for layer in layers for h in range(n_heads)]
    titles = [t("fig.layer_head", lang, layer=layer, head=h) for layer in layers for h in range(n_heads)]
    fig = heatmap_grid(mats, titles, None, None, t("fig.maps_title", lang), x_title or t("fig.key_position", lang),
                       y_title or t("fig.query_position", lang), cols=n_heads, zmax=1.0, style=style,
                       height=max(420, 320 * len(layers)), colorbar_title=t("fig.weight", lang), square=True,
                       lang=lang)
    if block is not None:
        q0, q1, k0, k1 = block
        for i in range(len(mats)):
            k = "" if i == 0 else str(i + 1)
            fig.add_shape(type="rect", xref=f"x{k}", yref=f"y{k}", x0=k0 - 0.5, x1=k1 + 0.5, y0=q0 - 0.5,
                          y1=q1 + 0.5, line={"color": "#ffffff", "width": style.line_width * 0.75, "dash": "dot"})
        fig.add_trace({"type": "scatter", "x": [None], "y": [None], "mode": "lines", "showlegend": True,
                       "name": "<br>".join(wrap_text(t("fig.repeat_block", lang), 58)),     # (two lines)
                       "line": {"color": "#888888", "dash": "dot"}})
        fig.update_layout(showlegend=True, margin_b=(fig.layout.margin.b or 60) + 40,
                          legend={"orientation": "h", "yref": "container", "y": 0.0, "yanchor": "bottom", "x": 0.0})
    return fig


def icl_figure(x: np.ndarray, y: np.ndarray, is_query: np.ndarray, prediction: np.ndarray,
               true_fn, style: Style = NORMAL, lang: str = "en", nw_prediction: np.ndarray | None = None,
               nw_label: str = "") -> go.Figure:
    """In-context regression: context pairs, the model's predictions at the queries, the true curve, and
    (``nw_prediction``) NW's estimate at the same queries from the same context."""
    grid = np.linspace(-3, 3, 200)
    traces = [line_trace(grid, true_fn(grid), t("fig.true_function", lang), "black", style, dash="dash"),
              {"type": "scatter", "x": x[~is_query], "y": y[~is_query], "mode": "markers",
               "name": t("fig.context", lang),
               "marker": {"size": style.marker_size, "color": "rgba(90,90,90,0.6)"}},
              {"type": "scatter", "x": x[is_query], "y": prediction[is_query], "mode": "markers",
               "name": t("fig.prediction", lang),
               "marker": {"size": style.marker_size * 1.8, "color": PALETTE[1], "symbol": "star"}}]
    if nw_prediction is not None:
        traces.append({"type": "scatter", "x": x[is_query], "y": nw_prediction, "mode": "markers",
                       "name": nw_label, "marker": {"size": style.marker_size * 1.5, "color": PALETTE[0],
                                                    "symbol": "diamond-open", "line": {"width": 2}}})
    return figure(traces, t("fig.icl_title", lang), t("fig.x", lang), t("fig.y", lang), style, height=360)


def schedule_figure(steps: np.ndarray, lr: np.ndarray, temperature: np.ndarray, current: int,
                    style: Style = NORMAL, lang: str = "en") -> go.Figure:
    """The learning rate and the temperature multiplier against step, over the schedules' length."""
    traces = [line_trace(steps, lr, t("fig.lr", lang), PALETTE[0], style),
              {**line_trace(steps, temperature, t("fig.temperature", lang), PALETTE[1], style, dash="dash"),
               "yaxis": "y2"}]
    refs = [Line(current, t("fig.now", lang), "x")]
    return figure(traces, t("fig.schedule_title", lang), t("fig.step", lang), t("fig.lr", lang), style,
                  height=300, lines=refs,
                  layout={"yaxis2": {"overlaying": "y", "side": "right", "rangemode": "tozero", "showgrid": False,
                                     "nticks": 4}})


def kv_timing_figure(rows, style: Style = NORMAL, lang: str = "en") -> go.Figure:
    """Measured ms per token with and without the cache (``timing.cache_timing``'s rows), and the theory for each
    (a + b·S with the cache, a + c·S² without, fitted to the measured points: ``kv_theory``), on log-log axes."""
    import pandas as pd  # pandas: kept off the first page's imports (cold start)
    df = pd.DataFrame(rows, columns=["length", "cache", "no_cache", "diff"])
    fit = kv_theory(df["length"].to_numpy(), df["cache"].to_numpy(), df["no_cache"].to_numpy())
    series = {t("fig.with_cache", lang): df["cache"], t("fig.no_cache", lang): df["no_cache"],
              t("fig.theory_linear", lang): fit["cache"], t("fig.theory_quadratic", lang): fit["no_cache"]}
    return lines(df["length"], series, t("fig.kv_title", lang), t("fig.kv_x", lang), t("fig.kv_y", lang),
                 mode="lines+markers", style=style, height=360, log_x=True, log_y=True,
                 dashes={t("fig.theory_linear", lang): "dot", t("fig.theory_quadratic", lang): "dot"},
                 colors={t("fig.theory_linear", lang): PALETTE[0], t("fig.theory_quadratic", lang): PALETTE[1]})


def kv_flops_figure(rows, style: Style = NORMAL, lang: str = "en") -> go.Figure:
    """FLOPs of the step that generates token S (``timing.generation_flops``), with and without the cache, in all
    and the attention part alone, on log-log axes: the attention part's slope is 1 with the cache and 2 without."""
    s = [r["length"] for r in rows]
    cache = t("fig.with_cache", lang)
    no_cache = t("fig.no_cache", lang)
    cache_att, no_cache_att = t("fig.with_cache_attention", lang), t("fig.no_cache_attention", lang)
    series = {no_cache: [r["no_cache_attention"] + r["no_cache_other"] for r in rows],
              cache: [r["cache_attention"] + r["cache_other"] for r in rows],
              no_cache_att: [r["no_cache_attention"] for r in rows], cache_att: [r["cache_attention"] for r in rows]}
    return lines(s, series, t("fig.kv_flops_title", lang), t("fig.kv_x", lang), t("fig.kv_flops_y", lang),
                 mode="lines+markers", style=style, height=360, log_x=True, log_y=True,
                 dashes={cache_att: "dot", no_cache_att: "dot"},
                 colors={no_cache: PALETTE[1], no_cache_att: PALETTE[1], cache: PALETTE[0], cache_att: PALETTE[0]})


def kv_theory(lengths: np.ndarray, cache: np.ndarray, no_cache: np.ndarray) -> dict[str, np.ndarray]:
    """Fits of the per-token cost: a + b·S with a cache, a + c·S² without (S = length), by least squares on the
    relative error, so every point counts alike on the figure's log axes (on the absolute error the longest length
    decides the fit, and a measured curve steeper than S² there pulls a below 0: the line then sits 10x under the
    shortest lengths' points)."""
    s = np.asarray(lengths, dtype=float)
    out = {}
    for name, y, power in (("cache", cache, 1), ("no_cache", no_cache, 2)):
        y = np.asarray(y, dtype=float)
        design = np.stack([np.ones_like(s), s ** power], axis=1)
        coef, *_ = np.linalg.lstsq(design / y[:, None], np.ones_like(y), rcond=None)
        out[name] = design @ coef
        out[f"{name}_coef"] = coef
    return out


def importance_figure(importance: dict, untrained: float | None = None, answer: tuple[int, int] | None = None,
                      style: Style = NORMAL, lang: str = "en") -> go.Figure:
    """Bars: how much the evaluation loss rises over the intact model's when each head is switched off alone, each
    labelled with that rise as a share of the untrained-to-trained gap (``untrained``: the loss of the model before
    training, on the same batch); ``answer``: the head the page's question asked for, outlined and named."""
    heads = [k for k in importance if k != "intact"]
    base = importance["intact"]
    names = [t("fig.layer_head", lang, layer=layer, head=h) for layer, h in heads]
    rise = [importance[k] - base for k in heads]
    gap = (untrained - base) if untrained is not None else None
    labels = [f"{r:+.3g}" + (t("fig.of_gap", lang, share=r / gap) if gap and gap > 0 else "") for r in rise]
    outline = [3 if k == answer else 0 for k in heads]
    bar = {"type": "bar", "x": names, "y": rise, "name": t("fig.loss_rise", lang),
           "marker": {"color": [PALETTE[h % len(PALETTE)] for _, h in heads],
                      "line": {"width": [w * style.line_width / 2 for w in outline], "color": "#111111"}},
           "text": labels, "textposition": "outside", "cliponaxis": False}
    lo, hi = min(0.0, *rise), max(0.0, *rise)
    pad = 0.25 * (hi - lo or 1.0)                                   # room for the bar labels
    annotations = []
    if answer in heads:
        i = heads.index(answer)
        annotations.append({"x": names[i], "y": rise[i], "yref": "y", "text": t("fig.answer", lang),
                            "showarrow": True, "arrowhead": 2, "ax": 0, "ay": -46, "yshift": 14,
                            "font": {"size": style.font_size, "color": "#111111"}})
    title = t("fig.importance_title", lang, base=base)
    return figure([bar], title, t("fig.head", lang), t("fig.loss_rise_axis", lang), style, height=340,
                  lines=[Line(0.0, "", "y", dash="solid")], yaxis={"range": [lo - (pad if lo < 0 else 0), hi + pad]},
                  layout={"annotations": annotations} if annotations else None)


def scores_figure(df: pd.DataFrame, n_layers: int, n_heads: int, style: Style = NORMAL,
                  lang: str = "en", baseline: dict | None = None) -> go.Figure:
    """Previous-token scores of layer 0 and induction scores of the later layers per head against step, with
    the loss on a second axis: the phase change (scores jump as the loss drops) in one figure; ``baseline``:
    uniform attention's two scores as labelled dotted lines."""
    df = _thin(df)
    traces = []
    for layer in range(n_layers):
        kind = "prevtok" if layer == 0 else "induction"
        for h in range(n_heads):
            traces.append(line_trace(df["step"], df[metric_key(kind, layer, h)],
                                     t(f"fig.score_{kind}", lang, layer=layer, head=h), series_look(h)["color"],
                                     style, dash="solid" if layer == 0 else "dash",
                                     symbol=series_look(h)["symbol"]))
    loss = line_trace(df["step"], df["loss"], t("fig.loss", lang), "#555555", style, dash="dot", yaxis="y2")
    traces.append(loss)
    refs = [Line(baseline[k], t(f"fig.uniform_{k}", lang, value=baseline[k]), "y", dash="dot")
            for k in ("prevtok", "induction")] if baseline else []
    return figure(traces, t("fig.scores_title", lang), t("fig.step", lang), t("fig.score_axis", lang), style,
                  height=380, yaxis={"range": [0, 1.05]}, lines=refs,
                  layout={"yaxis2": {"title": {"text": t("fig.loss_log", lang)}, "overlaying": "y", "side": "right",
                                     "showgrid": False, "type": "log", "automargin": True,
                                     **log_ticks([loss], "y")}})     # (plotly's own: mantissas only, or 4.18778)


def qk_figure(matrix: np.ndarray, layer: int, head: int, style: Style = NORMAL, lang: str = "en") -> go.Figure:
    """The QK circuit of one head as a token × token heatmap (red: the query token likes the key token)."""
    lim = float(np.abs(matrix).max()) or 1.0
    return common.heatmap(matrix, None, None, t("fig.qk_title", lang, layer=layer, head=head), t("fig.key_token", lang),
                   t("fig.query_token", lang), colorbar_title=t("fig.qk_logit", lang), colorscale="RdBu_r",
                   zmin=-lim, zmax=lim, height=420, style=style, lang=lang)
