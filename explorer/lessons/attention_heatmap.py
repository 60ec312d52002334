"""Attention heatmap: the NW weight matrix, one query's weights and the rows' entropy, and a bandwidth sweep.

Figures: the (queries × training points) weights, one query's weights drawn on the data, the entropy of every
row, the same matrix at several bandwidths. Numbers: what rows look like at the slider's ends (the notice and the
question), whether the entropy follows the local density of the data.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np
import torch

from ..attention import entropy
from ..figures import common
from ..figures.attention import query_row_figure
from ..i18n import Message, t
from ..kernels import get_kernel
from ..regression import nadaraya_watson, nw_weights
from .base import Question, Say, figure_table, flatten, says, specs
from .params import Param
from .shared import BANDWIDTH, BANDWIDTHS, KERNEL, SHARED, data_of

N_QUERIES = Param("heat.n_queries", "slider", 100, "ah.n_queries", "ah.n_queries_help", lo=10, hi=1000, step=10)
# any finite x in a link; the page's slider runs over the data's own x range
QUERY_X = Param("heat.query_x", "slider", 0.0, "ah.query_x", "ah.query_x_help", lo=-1e9, hi=1e9, step=0.01)
SWEEP = Param("heat.sweep", "multiselect", [0.1, 0.2, 0.5, 1.0], "ah.sweep_pick", options=tuple(BANDWIDTHS),
              fmt="g", max_selections=6)
PARAMS = (*SHARED, N_QUERIES, QUERY_X, SWEEP)
FILE_NAME = ((KERNEL, "{}"), (BANDWIDTH, "h{}"))
MAIN = "weights_heatmap"
SMALL_H, LARGE_H = 0.01, 10.0           # the bandwidth slider's ends, as the notice and the question read them
FIGURES, figure = figure_table()


# --------------------------------------------------------------------------- figures
def _weights(data: Mapping, kernel: str, h: float, n_queries: int) -> dict:
    """NW weights of ``n_queries`` evenly spaced queries, their estimates and row entropies."""
    x = torch.as_tensor(data["x"])
    xq = torch.linspace(float(data["x_grid"][0]), float(data["x_grid"][-1]), n_queries, dtype=x.dtype)
    w = nw_weights(xq, x, kernel, h)
    ent = torch.where(w.sum(-1) > 0, entropy(w), torch.nan)    # no support: no estimate, no entropy
    return {**data, "x_query": xq.numpy(), "x_key": data["x"], "weights": w.numpy(), "kernel": kernel, "h": h,
            "estimate": nadaraya_watson(xq, x, torch.as_tensor(data["y"]), kernel, h).numpy(),
            "entropy": ent.numpy()}


@figure("weights_heatmap", _weights)
def _draw_weights(d: dict, lang: str):
    z, rows, cols, _ = common.downsample(d["weights"], d["x_query"], d["x_key"])
    title = t("ah.heat_title", lang, kernel=t(f"kernel.{d['kernel']}", lang), h=d["h"])
    return common.heatmap(z, np.round(cols, 3), np.round(rows, 3), title, t("ah.key_axis", lang),
                          t("ah.query_axis", lang), height=520, colorbar_title=t("fig.weight", lang), lang=lang)


def query_index(x_query: np.ndarray, x: float) -> int:
    """The query nearest to ``x``: the one whose row the page picks."""
    return int(np.abs(np.asarray(x_query) - x).argmin())


@figure("query_row", _weights, marks=("query_x",))
def _draw_query_row(d: dict, lang: str):
    """Mark ``query_x``: the row of the query nearest to it."""
    i = query_index(d["x_query"], d["query_x"])
    return query_row_figure(d["x"], d["y"], d["weights"][i], float(d["x_query"][i]), float(d["estimate"][i]),
                            d["x_grid"], d["true"], lang=lang)


@figure("row_entropy", _weights, marks=("query_x",))
def _draw_entropy(d: dict, lang: str):
    """Every row's entropy against its query, with log N, 0 and the picked query (mark ``query_x``) marked."""
    xq, log_n = d["x_query"], math.log(len(d["x_key"]))
    picked = float(xq[query_index(xq, d["query_x"])])
    return common.lines(xq, {t("ah.entropy_series", lang): d["entropy"]}, t("ah.entropy_title", lang),
                        t("ah.query_x", lang), t("fig.entropy_nats", lang),
                        hlines=[(log_n, t("ah.log_n", lang, value=log_n)), (0.0, t("ah.one_hot", lang))],
                        vlines=[(picked, t("ah.picked", lang))], height=380)


def _sweep(data: Mapping, kernel: str, bandwidths: tuple[float, ...], n_queries: int) -> dict:
    """Each bandwidth's weights as the panel shows them (block-averaged to its share of ``MAX_DISPLAY_CELLS``):
    the full matrices of six panels at 1,000 queries x 2,000 points are 96 MB, more than a server keeps for one
    figure (``explorer.ui.memory``); what is drawn is 2 MB."""
    panels = []
    for b in sorted(bandwidths):
        full = _weights(data, kernel, b, n_queries)
        z, rows, cols, factor = common.downsample(full["weights"], full["x_query"], full["x_key"],
                                                  common.MAX_DISPLAY_CELLS // len(bandwidths))
        panels.append({"h": b, "weights": z, "x_query": rows, "x_key": cols, "factor": factor,
                       "shape": full["weights"].shape})
    return {"kernel": kernel, "panels": panels}


@figure("sigma_sweep", _sweep, marks=("answer",))
def _draw_sweep(d: dict, lang: str):
    """Mark ``answer`` (h, text): the panel at that h is the one the page's question asked about; its title says so
    (the answer itself is the verdict's, above the figure: in a panel's title it needed six lines). One row up to
    five panels (the question's h joins a row of four), two rows beyond."""
    panels = d["panels"]
    mats = [common.downsample(p["weights"], p["x_query"], p["x_key"], common.MAX_DISPLAY_CELLS // len(panels))
            for p in panels]                  # (already at that size: ``_sweep`` keeps what is drawn)
    _, rows, cols, _ = mats[0]
    answer = d.get("answer")
    titles = [f"<b>h = {p['h']:g}</b><br><b>{t('fig.asked_panel', lang)}</b>" if answer and p["h"] == answer[0]
              else f"h = {p['h']:g}" for p in panels]
    return common.heatmap_grid([m[0] for m in mats], titles, np.round(cols, 2),
                               np.round(rows, 2), t("ah.sweep_title", lang, kernel=t(f"kernel.{d['kernel']}", lang)),
                               t("ah.key_short", lang), t("ah.query_short", lang),
                               cols=len(mats) if len(mats) <= 5 else 4,
                               colorbar_title=t("fig.weight", lang), lang=lang)


def figures(values: Mapping[str, Any], data: Mapping | None = None, asked: float | None = None) -> dict:
    """The page's figures at ``values``; ``asked``: a bandwidth the sweep shows besides the chosen ones (the one
    the question is about, once revealed)."""
    data = data_of(values) if data is None else data
    kernel, h, n_queries = values[KERNEL.key], values[BANDWIDTH.key], values[N_QUERIES.key]
    one = {"data": data, "kernel": kernel, "h": h, "n_queries": n_queries}
    sweep = sorted({*(values[SWEEP.key] or [h]), *(() if asked is None else (asked,))})
    return specs(__name__.rsplit(".", 1)[-1], FIGURES, {
        "weights_heatmap": one,
        "query_row": (one, {"query_x": values[QUERY_X.key]}),
        "row_entropy": (one, {"query_x": values[QUERY_X.key]}),
        "sigma_sweep": {"data": data, "kernel": kernel, "bandwidths": tuple(sweep), "n_queries": n_queries},
    })


# --------------------------------------------------------------------------- what the page says
def display_factor(weights: np.ndarray) -> int:
    """How many cells of the matrix one drawn cell averages (1: every weight is drawn)."""
    rows, cols = np.arange(weights.shape[0]), np.arange(weights.shape[1])
    return common.downsample(weights, rows, cols)[3]


DISPLAY_CELLS = common.MAX_DISPLAY_CELLS


def query_range(x_query: np.ndarray) -> tuple[float, float]:
    """The query slider's range: the queries' span, outwards to the slider's step of 0.01."""
    return float(np.floor(x_query[0] * 100) / 100), float(np.ceil(x_query[-1] * 100) / 100)


def heatmap_regimes(x_train, kernel: str, x_query, small_h: float = SMALL_H, large_h: float = LARGE_H) -> dict:
    """What the heatmap looks like at the two ends of the bandwidth slider: mean row entropy and mean largest weight
    of a row at a small and a large h, over the rows with support (``supported_small`` of ``rows_small``: a compact
    kernel leaves a query with no training point within h an empty row), and at the large h the largest ratio
    between the biggest and smallest weight of a row (1 = a perfectly flat row)."""
    out = {"small_h": small_h, "large_h": large_h}
    for tag, h in (("small", small_h), ("large", large_h)):
        w = nw_weights(torch.as_tensor(x_query), torch.as_tensor(x_train), kernel, h)
        ok = w.sum(-1) > 0
        out[f"entropy_{tag}"] = float(entropy(w[ok]).mean()) if bool(ok.any()) else math.nan
        out[f"max_weight_{tag}"] = float(w[ok].amax(-1).mean()) if bool(ok.any()) else math.nan
        out[f"rows_{tag}"], out[f"supported_{tag}"] = int(ok.numel()), int(ok.sum())
        if tag == "large":
            rows = w[ok]
            out["row_ratio_large"] = float((rows.amax(-1) / rows.amin(-1)).max()) if bool(ok.any()) else math.nan
    return out


def regimes_of(data: Mapping, kernel: str, n_queries: int) -> dict:
    """``heatmap_regimes`` on the page's queries (they do not depend on h)."""
    return heatmap_regimes(data["x"], kernel, np.linspace(data["x_grid"][0], data["x_grid"][-1], n_queries))


ROW_SHAPES = ("spike", "band", "flat")


ONE_HOT = 0.9          # a row is "near one-hot" (a spike) when its largest weight is above this on average


def row_shape(entropy: float, log_n: float, max_weight: float) -> int:
    """What a weight row looks like, as an index into ``ROW_SHAPES``: a spike (nearly all weight on one key: the
    largest above ``ONE_HOT``), nearly flat (entropy above 95 % of log N), or a band in between."""
    if max_weight > ONE_HOT:
        return 0
    return 2 if entropy > 0.95 * log_n else 1


def small_h_rows(regimes: dict, n: int, kernel: str) -> str:
    """How rows look at the slider's small end, for the notice: "spike" (near one-hot), "band" (spread over the
    few points in reach: dense data), "none" (no query has a point within h) or "flat" (the constant kernel)."""
    if kernel == "constant":
        return "flat"
    if not math.isfinite(regimes["entropy_small"]):
        return "none"
    return ROW_SHAPES[row_shape(regimes["entropy_small"], math.log(n), regimes["max_weight_small"])]


DENSITY_CORRELATION = 0.8     # entropy "follows" the local density when they correlate at least this well


def entropy_and_density(weights, entropy_rows, x_query, x_train, kernel: str, h: float) -> dict:
    """Whether the entropy of the rows drawn follows how crowded the training points near each query are (its
    correlation with the log of the kernel's total weight Σᵢ K((x − xᵢ)/h) is at least ``DENSITY_CORRELATION``)
    and falls at both ends of the x range (the end queries below the highest of their five inner neighbours),
    over the rows with support; with the entropy's range."""
    ent = np.asarray(entropy_rows, dtype=float)
    ok = np.isfinite(ent)
    mass = get_kernel(kernel).profile(torch.as_tensor((np.asarray(x_query)[:, None] - np.asarray(x_train)[None, :])
                                                      / h)).numpy().sum(1)
    lo, hi = (float(ent[ok].min()), float(ent[ok].max())) if ok.any() else (math.nan, math.nan)
    if ok.sum() < 8 or hi - lo < 1e-9:
        return {"holds": False, "corr": math.nan, "lo": lo, "hi": hi}
    corr = float(np.corrcoef(ent[ok], np.log(mass[ok]))[0, 1])
    e = ent[ok]
    ends_fall = e[0] < e[1:6].max() and e[-1] < e[-6:-1].max()
    return {"holds": bool(corr >= DENSITY_CORRELATION and ends_fall), "corr": corr, "lo": lo, "hi": hi}


@says("ah.size", "ah.downsampled")
def size_caption(res: Mapping) -> Say:
    """Under the matrix: its size, and how many weights a drawn cell averages when it is too big to draw whole."""
    w = res["weights"]
    extra = Message("ah.downsampled", factor=display_factor(w), limit=DISPLAY_CELLS) if display_factor(w) > 1 else ""
    return Say("ah.size", tone="caption", m=w.shape[0], n=w.shape[1], cells=w.size, downsampled=extra)


@says("ah.sweep_averaged")
def sweep_caption(sweep: Mapping) -> Say | None:
    """Under the sweep, when its panels are block-averaged to share the cells one figure draws: by how much (the
    matrices behind them are whole); nothing when every weight is drawn."""
    panel = sweep["panels"][0]
    if panel["factor"] == 1:
        return None
    return Say("ah.sweep_averaged", tone="caption", factor=panel["factor"], m=panel["shape"][0], n=panel["shape"][1],
               panels=len(sweep["panels"]))


@says("ah.no_support_caption")
def support_caption(res: Mapping) -> Say | None:
    """How many queries have no training point within h (a compact kernel: no estimate there)."""
    unsupported = int(np.isnan(res["entropy"]).sum())
    if not unsupported:
        return None
    return Say("ah.no_support_caption", tone="caption", n=unsupported, m=len(res["x_query"]),
               kernel=Message(f"kernel.{res['kernel']}"))


@says("ah.row_text", "ah.row_none_text")
def row_text(res: Mapping, query_x: float) -> Say:
    """The chosen query's row: its largest weight, how many weights pass 0.01, its entropy against log N."""
    xq = res["x_query"]
    i = query_index(xq, query_x)
    row = res["weights"][i]
    if row.sum() > 0:
        return Say("ah.row_text", x=xq[i], wmax=row.max(), n_big=int((row > 0.01).sum()), n=len(row),
                   h=res["entropy"][i], log_n=math.log(len(row)))
    return Say("ah.row_none_text", x=xq[i], kernel=Message(f"kernel.{res['kernel']}"))


@says("ah.predict_why")
def question(ends: Mapping, n: int, kernel: str) -> Question:
    """"At h = 10, what does a row look like?", answered from the rows at the slider's large end."""
    log_n = math.log(n)
    right = row_shape(ends["entropy_large"], log_n, ends["max_weight_large"])
    large = ends["large_h"]
    return Question("ah.wide", Say("ah.predict_q", h=large, kernel=Message(f"kernel.{kernel}")),
                    tuple(Say(f"ah.shape_{shape}") for shape in ROW_SHAPES), right,
                    Say("ah.predict_why", h=large, ent=ends["entropy_large"], log_n=log_n,
                        wmax=ends["max_weight_large"]))


@says("ah.notice", "ah.notice_small_spike", "ah.notice_small_band", "ah.notice_small_none", "ah.notice_small_flat",
      "ah.notice_large", "ah.notice_density", "ah.notice_density_not")
def notice(res: Mapping, ends: Mapping, data: Mapping, h: float) -> list[Say]:
    """What to notice: the rows at the slider's two ends (``ends``: ``regimes_of``), and whether the entropy of the
    rows drawn at ``h`` (``res``) follows the density of the data."""
    n, kernel = len(data["x"]), res["kernel"]
    small = small_h_rows(ends, n, kernel)
    density = entropy_and_density(res["weights"], res["entropy"], res["x_query"], data["x"], kernel, h)
    rows, supported = ends["rows_small"], ends["supported_small"]
    over = Message("ah.over_rows", k=supported, m=rows, empty=rows - supported) if 0 < supported < rows else ""
    return [Say("ah.notice"),
            Say(f"ah.notice_small_{small}", kernel=Message(f"kernel.{kernel}"), small=ends["small_h"],
                mw_small=ends["max_weight_small"], ent_small=ends["entropy_small"], n=n, over=over,
                keys=math.exp(ends["entropy_small"]) if math.isfinite(ends["entropy_small"]) else 0.0),
            Say("ah.notice_large", large=ends["large_h"], ent_large=ends["entropy_large"], log_n=math.log(n),
                inv_n=1 / n, ratio=ends["row_ratio_large"]),
            Say("ah.notice_density" if density["holds"] else "ah.notice_density_not", corr=density["corr"],
                lo=density["lo"], hi=density["hi"])]


def sentences(values: Mapping[str, Any], data: Mapping | None = None) -> list[Say]:
    """Everything the page says at ``values``, in its order."""
    data = data_of(values) if data is None else data
    res = figures(values, data)["weights_heatmap"].data()
    ends = regimes_of(data, values[KERNEL.key], values[N_QUERIES.key])
    return flatten([size_caption(res), support_caption(res), row_text(res, values[QUERY_X.key]),
                    question(ends, len(data["x"]), values[KERNEL.key]).why,
                    notice(res, ends, data, values[BANDWIDTH.key])])


@says("ah.query_x_help", fixed="which query is drawn: the nearest one, checked at five x")
def help_texts() -> list[Say]:
    """The help texts of this lesson's controls that state a fact (shown with the widgets, from their ``Param``)."""
    return [Say("ah.query_x_help")]
