"""Efficient attention: the Gaussian kernel behind softmax attention, estimated with random features, computed in
key blocks with the online softmax, and linear attention run as an RNN; what each costs.

Figures: the exact fit against its random-feature estimate and linear attention (``MAIN``), the estimate's error
against m, the online softmax's running state, the RNN's state, and the measured cost and memory (of the machine
that runs them: drawn on the page, not exported). Numbers: the cost crossover, the error's law.
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping
from typing import Any

import numpy as np
import torch

from ..efficient import (
    kernel_estimate_error,
    linear_attention,
    linear_attention_masked,
    linear_attention_states,
    random_feature_map,
)
from ..figures import common
from ..figures import regression as rfig
from ..figures.answer import mark_answer
from ..figures.style import NORMAL, PALETTE, line_trace
from ..figures.style import figure as styled_figure
from ..i18n import Message, byte_size, scientific, t
from ..online import online_softmax, online_softmax_attention
from ..regression import nadaraya_watson, nw_weights
from .base import Question, Say, figure_table, flatten, says, specs
from .kernel_regression import upload_axes
from .params import Param, seed_param
from .shared import SHARED, data_of

H = Param("ef.h", "select_slider", 1.0, "ef.h", "ef.h_help", options=(0.2, 0.3, 0.5, 0.7, 1.0, 1.5, 2.0, 3.0, 5.0),
          fmt="g")
KIND = Param("ef.kind", "select", "trig", "ef.kind", options=("trig", "positive"), names="ef.kind_")
M = Param("ef.m", "select_slider", 64, "ef.m", options=(8, 16, 32, 64, 128, 256, 512, 1024))
ORTH = Param("ef.orth", "toggle", False, "ef.orth", "ef.orth_help")
SEED = seed_param("ef.seed")
X0 = Param("ef.x0", "slider", 0.3, "ef.x0", lo=0.0, hi=1.0, step=0.01)
BLOCK = Param("ef.block", "select_slider", 25, "ef.block", options=(10, 25, 50, 100, 250, 500))
STEP = Param("ef.step", "slider", 1, "ef.step", lo=1, hi=200)
T = Param("ef.rnn_t", "slider", 12, "ef.rnn_t", lo=1, hi=12)
PARAMS = (*SHARED, H, KIND, M, ORTH, SEED, X0, BLOCK, STEP, T)
FILE_NAME = ((H, "h{}"), (KIND, "{}"), (M, "m{}"))
MAIN = "efficient_zoo"
RNN_LENGTH, RNN_D = 12, 4       # the RNN figure's random sequence: 12 steps of 4-dimensional q, k, v
FIGURES, figure = figure_table()


# --------------------------------------------------------------------------- figures
EMBED_D = 16                          # the 1-D inputs, placed along one axis of R^16 for the random features
FEATURE_COUNTS = (8, 16, 32, 64, 128, 256, 512, 1024)


def _rf_weights(x_query: np.ndarray, x_keys: np.ndarray, h: float, m: int, kind: str, orthogonal: bool,
                seed: int) -> np.ndarray:
    """NW weights of the Gaussian kernel estimated with random features: φ(q)·ψ(k_i), rows normalised, where
    q = x/h, k_i = x_i/h (on one axis of R^16) and ψ(k) = φ(k) exp(-|k|²/2), so that
    E[φ(q)·ψ(k)] = exp(q·k - |k|²/2) = exp(-(x - x_i)²/(2h²)) times a factor of the query alone."""
    phi = random_feature_map(EMBED_D, m, kind, orthogonal, seed)
    q = torch.zeros(len(x_query), EMBED_D, dtype=torch.float64)
    k = torch.zeros(len(x_keys), EMBED_D, dtype=torch.float64)
    q[:, 0], k[:, 0] = torch.as_tensor(x_query) / h, torch.as_tensor(x_keys) / h
    a = phi(q) @ (phi(k) * torch.exp(-0.5 * (k * k).sum(-1, keepdim=True))).T        # (M, N) estimates
    total = a.sum(-1, keepdim=True)
    return torch.where(total != 0, a / torch.where(total != 0, total, 1.0), torch.nan).numpy()


def _zoo(data: Mapping, h: float, m: int, kind: str, orthogonal: bool, seed: int) -> dict:
    """The exact Gaussian (softmax) NW fit, its random-feature estimate, and linear attention with the fixed
    map elu+1 of the scalar x/h, on the data's query grid."""
    grid, x, y = data["x_grid"], data["x"], data["y"]
    exact_w = nw_weights(grid, x, "gaussian", h).numpy()
    rf_w = _rf_weights(grid, x, h, m, kind, orthogonal, seed)
    xs = torch.as_tensor(x)[:, None] / h
    elu = linear_attention(torch.as_tensor(grid)[:, None] / h, xs, torch.as_tensor(y)[:, None]).numpy()[:, 0]
    exact, rf = exact_w @ y, rf_w @ y
    return {**data, "h": h, "m": m, "kind": kind, "exact": exact, "rf": rf, "elu": elu,
            "weight_error": float(np.nanmean(np.abs(rf_w - exact_w).sum(1))),
            "fit_error": float(np.sqrt(np.nanmean((rf - exact) ** 2))), "elu_spread": float(elu.max() - elu.min())}


@figure("efficient_zoo", _zoo)
def _draw_zoo(z: dict, lang: str):
    return rfig.fit_figure(z["x"], z["y"], z["x_grid"], z["true"],
                           {t("ef.exact", lang, h=z['h']): z["exact"],
                            t("ef.rf", lang, m=z["m"]): z["rf"], t("ef.elu", lang): z["elu"]},
                           title=t("ef.zoo_title", lang, kind=t(f"ef.kind_short_{z['kind']}", lang)), lang=lang,
                           axes=upload_axes(z, lang))


ERROR_DRAWS = 16               # random maps per point of the error figure
ERROR_KEYS = 300               # keys it uses at most (evenly spaced among the sorted training points)


def _rf_error(data: Mapping, h: float, kind: str, seed: int) -> dict:
    """The random-feature estimate's RMS error against the exact Gaussian kernel for m from 8 to 1,024, iid and
    orthogonal directions (``efficient.kernel_estimate_error``: ``ERROR_DRAWS`` nested draws, every 8th query of
    the grid, at most ``ERROR_KEYS`` keys), with the exact iid theory σ/√m; the fitted slope of the iid curve
    from m = 64 on, and the orthogonal curve as a share of the iid one."""

    x = np.asarray(data["x"])
    keys = x[np.linspace(0, len(x) - 1, ERROR_KEYS).round().astype(int)] if len(x) > ERROR_KEYS else x
    queries = np.asarray(data["x_grid"])[::8]
    iid, orth = (kernel_estimate_error(queries, keys, h, kind, o, seed, FEATURE_COUNTS, ERROR_DRAWS)
                 for o in (False, True))
    m = iid["m"]
    tail = m >= 64
    slope = float(np.polyfit(np.log(m[tail]), np.log(iid["rms"][tail]), 1)[0])
    return {"m": m, "kind": kind, "iid": iid["rms"], "orthogonal": orth["rms"], "theory": iid["theory"],
            "log10_theory": iid["log10_theory"],
            "slope": slope, "orth_share": float(np.mean(orth["rms"] / iid["rms"])), "draws": ERROR_DRAWS,
            "n_keys": len(keys), "reach": float(np.abs(x).max() / h)}


@figure("efficient_error", _rf_error, marks=("answer",))
def _draw_error(e: dict, lang: str):
    """``answer``: a label on the iid error at m = 256, four times the page's default m."""
    iid, orth, theory = t("ef.w_iid", lang), t("ef.w_orth", lang), t("ef.theory", lang)
    fig = common.lines(e["m"], {iid: e["iid"], orth: e["orthogonal"], theory: e["theory"]},
                       t("ef.error_title", lang), t("ef.m_axis", lang), t("ef.error_axis", lang), log_x=True,
                       log_y=True, mode="lines+markers", dashes={theory: "dot"},
                       colors={iid: PALETTE[0], orth: PALETTE[1], theory: "#222"})
    if e.get("answer"):
        i = int(np.flatnonzero(e["m"] == 256)[0])
        mark_answer(fig, 256.0, float(e["iid"][i]), e["answer"])
    return fig


def _online_row(data: Mapping, h: float, x0: float, block: int) -> dict:
    """One NW query row computed block by block with the online softmax (logits -(x0 - x_i)²/(2h²))."""

    x, y = np.asarray(data["x"]), np.asarray(data["y"])
    logits = torch.as_tensor(-(x0 - x) ** 2 / (2 * h * h))
    out, states = online_softmax(logits, torch.as_tensor(y)[:, None], block)
    n_q = len(data["x_grid"])          # what all the grid's queries need: the dense weights vs one block + 3 sums
    return {"x": x, "logits": logits.numpy(), "x0": x0, "h": h, "block": block, "n_queries": n_q,
            "dense_bytes": n_q * len(x) * 8, "stream_bytes": n_q * (min(block, len(x)) + 3) * 8,
            "stops": np.array([s["stop"] for s in states]), "max": np.array([float(s["max"]) for s in states]),
            "rescale": np.array([float(s["rescale"]) for s in states]),
            "sum": np.array([float(s["sum"]) for s in states]),
            "estimate": np.array([float(s["acc"][0] / s["sum"]) if s["sum"] > 0 else np.nan for s in states]),
            "final": float(out[0]), "exact": float(nadaraya_watson([x0], x, y, "gaussian", h)[0])}


@figure("online_logits", _online_row, marks=("step",))
def _draw_online_logits(r: dict, lang: str):
    step = min(r.get("step", len(r["stops"])), len(r["stops"]))
    seen = np.arange(len(r["x"])) < r["stops"][step - 1]
    traces = [{"type": "scatter", "x": r["x"][~seen], "y": r["logits"][~seen], "mode": "markers",
               "name": t("ef.unseen", lang), "marker": {"color": "#bbbbbb", "size": 5, "symbol": "circle-open"}},
              {"type": "scatter", "x": r["x"][seen], "y": r["logits"][seen], "mode": "markers",
               "name": t("ef.seen", lang, k=step), "marker": {"color": PALETTE[0], "size": 6}},
              line_trace([r["x"].min(), r["x"].max()], [r["max"][step - 1]] * 2, t("ef.running_max", lang),
                         PALETTE[1], NORMAL, dash="dash")]
    return styled_figure(traces, t("ef.online_title", lang, x0=r['x0']), t("ef.key_x", lang),
                  t("ef.logit_axis", lang), NORMAL, 380)


@figure("online_running", _online_row, marks=("step",))
def _draw_online_running(r: dict, lang: str):
    blocks = np.arange(1, len(r["stops"]) + 1)
    step = min(r.get("step", len(blocks)), len(blocks))
    return common.lines(blocks, {t("ef.partial_estimate", lang): r["estimate"]}, t("ef.running_title", lang),
                        t("ef.block_axis", lang), t("ef.estimate_axis", lang), mode="lines+markers",
                        hlines=[(r["exact"], t("ef.exact_estimate", lang, value=r['exact']))],
                        vlines=[(step, t("ef.step_mark", lang))], height=380)


def _rnn(length: int, d: int, seed: int) -> dict:
    """Causal linear attention (elu+1) on random q, k, v run as an RNN, and the masked parallel form."""
    g = torch.Generator().manual_seed(seed)
    q, k, v = (torch.randn(length, d, generator=g, dtype=torch.float64) for _ in range(3))
    states = linear_attention_states(q, k, v)
    parallel = linear_attention_masked(q, k, v, torch.ones(length, length, dtype=torch.bool).tril())
    rnn = torch.stack([s["output"] for s in states])
    return {"states": np.stack([s["state"].numpy() for s in states]), "rnn": rnn.numpy(),
            "parallel": parallel.numpy(), "max_diff": float((rnn - parallel).abs().max()), "d": d}


@figure("rnn_state", _rnn, marks=("t",))
def _draw_rnn(r: dict, lang: str):
    t_ = min(r.get("t", len(r["states"])), len(r["states"]))
    z = r["states"][t_ - 1]
    top = float(np.abs(r["states"]).max())               # one symmetric scale for every t, 0 in the middle
    cells = [f"v{i + 1}" for i in range(z.shape[1])], [f"φ{i + 1}" for i in range(z.shape[0])]   # category labels
    return common.heatmap(z, *cells, t("ef.state_title", lang, t=t_), t("ef.state_col", lang),
                          t("ef.state_row", lang), zmin=-top, zmax=top, colorbar_title=t("ef.state_value", lang),
                          colorscale="RdBu_r", reverse_y=True, height=360, lang=lang)


COST_LENGTHS = (32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384)
DENSE_MAX = 8192                # the N × N float32 weights at 16k would take 1 GiB (twice, with the logits)


def _memory(d: int, lengths: tuple[int, ...] = COST_LENGTHS, block: int = 1024) -> dict:
    """The bytes the largest intermediates of dense softmax attention, the online softmax and linear attention take
    at float32, counted from their shapes (nothing run, nothing timed)."""
    n = np.array(lengths, dtype=float)
    return {"n": n, "dense_bytes": 2 * n * n * 4,                         # logits and weights, N × N each
            "online_bytes": 2 * n * np.minimum(block, n) * 4 + n * (d + 2) * 4,     # one block, running sums
            "linear_bytes": 2 * n * d * 4 + d * d * 4,                   # φ(Q), φ(K) and the d × d state
            "d": d, "block": block}


def _cost(d: int, lengths: tuple[int, ...] = COST_LENGTHS, block: int = 1024, seed: int = 0) -> dict:
    """Time (best of 3) of dense softmax attention (the N × N weights built), the online softmax (key blocks)
    and linear attention (elu+1), on this machine at float32; and the bytes each one's largest intermediates
    take (``_memory``)."""

    def best(fn):
        out = []
        for _ in range(3 if n <= 2048 else 1):            # the long runs are long enough to time once
            t0 = time.perf_counter()
            fn()
            out.append(time.perf_counter() - t0)
        return min(out)

    rows = {"dense": [], "online": [], "linear": []}
    g = torch.Generator().manual_seed(seed)
    for n in lengths:
        q, k, v = (torch.randn(n, d, generator=g) for _ in range(3))
        rows["dense"].append(best(lambda q=q, k=k, v=v: torch.softmax(q @ k.T / d ** 0.5, -1) @ v)
                             if n <= DENSE_MAX else np.nan)
        rows["online"].append(best(lambda q=q, k=k, v=v: online_softmax_attention(q, k, v, block, record=False)))
        rows["linear"].append(best(lambda q=q, k=k, v=v: linear_attention(q, k, v)))
    return _memory(d, lengths, block) | {k: np.array(v, dtype=float) for k, v in rows.items()}


@figure("attention_cost", _cost, exported=False)
def _draw_cost(c: dict, lang: str):
    n = c["n"]
    dense, online, linear = t("ef.dense", lang), t("ef.online", lang), t("ef.linear", lang)
    quad, lin = t("ef.theory_quadratic", lang), t("ef.theory_linear", lang)
    ok = ~np.isnan(c["dense"])
    at = np.flatnonzero(ok)[-1]
    series = {dense: c["dense"] * 1e3, online: c["online"] * 1e3, linear: c["linear"] * 1e3,
              quad: c["dense"][at] * 1e3 * (n / n[at]) ** 2, lin: c["linear"][-1] * 1e3 * n / n[-1]}
    cross = crossover(n, c["dense"], c["linear"])
    return common.lines(n, series, t("ef.cost_title", lang, d=c["d"]), t("ef.n_axis", lang), t("ef.ms_axis", lang),
                        log_x=True, log_y=True, mode="lines+markers", dashes={quad: "dot", lin: "dot"},
                        colors={quad: "#777", lin: "#222"},
                        vlines=[(cross, t("ef.crossover", lang, n=int(cross)))] if cross else [])


@figure("attention_memory", _memory, exported=False)   # (the page draws it from the timed rows)
def _draw_memory(c: dict, lang: str):
    mib = 1 / 2 ** 20
    return common.lines(c["n"], {t("ef.dense", lang): c["dense_bytes"] * mib, t("ef.online", lang):
                                 c["online_bytes"] * mib, t("ef.linear", lang): c["linear_bytes"] * mib},
                        t("ef.memory_title", lang), t("ef.n_axis", lang), t("ef.mib_axis", lang), log_x=True,
                        log_y=True, mode="lines+markers")


def query_x(values: Mapping[str, Any], data: Mapping) -> float:
    """The online softmax's query: the slider's share of the way along the data's query grid."""
    lo, hi = float(data["x_grid"][0]), float(data["x_grid"][-1])
    return lo + values[X0.key] * (hi - lo)


def n_blocks(data: Mapping, block: int) -> int:
    """How many key blocks the online softmax reads (the step slider's end)."""
    return -(-len(data["x"]) // block)


def figures(values: Mapping[str, Any], data: Mapping | None = None) -> dict:
    """The page's figures at ``values``; ``data``: the dataset's arrays (an upload's), else generated."""
    data = data_of(values) if data is None else data
    h, kind, seed, block = values[H.key], values[KIND.key], values[SEED.key], values[BLOCK.key]
    online = ({"data": data, "h": h, "x0": query_x(values, data), "block": block},
              {"step": min(values[STEP.key], n_blocks(data, block))})
    return specs(__name__.rsplit(".", 1)[-1], FIGURES, {
        "efficient_zoo": {"data": data, "h": h, "m": values[M.key], "kind": kind, "orthogonal": values[ORTH.key],
                          "seed": seed},
        "efficient_error": {"data": data, "h": h, "kind": kind, "seed": seed},
        "online_logits": online, "online_running": online,
        "rnn_state": ({"length": RNN_LENGTH, "d": RNN_D, "seed": seed}, {"t": values[T.key]}),
        "attention_cost": {"d": 64}, "attention_memory": {"d": 64}})


# --------------------------------------------------------------------------- what the page says
def crossover(lengths, dense, linear) -> float | None:
    """The first length from which linear attention is faster than dense attention at every measured length
    where both ran (None when it never is)."""
    lengths, dense, linear = (np.asarray(a, dtype=float) for a in (lengths, dense, linear))
    both = ~np.isnan(dense)
    faster = (linear < dense)[both]
    for i in range(len(faster)):
        if faster[i:].all():
            return float(lengths[both][i])
    return None


def cost_summary(cost: dict) -> dict | None:
    """What the cost text quotes: the crossover and, at the largest length the dense run reached, the times
    (ms) and intermediates (MiB) of the three implementations; None when linear attention never wins."""
    n = np.asarray(cost["n"])
    cross = crossover(n, cost["dense"], cost["linear"])
    if cross is None:
        return None
    at = int(np.flatnonzero(~np.isnan(cost["dense"]))[-1])
    return {"cross": int(cross), "n_max": int(n[at]), "dense": cost["dense"][at] * 1e3,
            "linear": cost["linear"][at] * 1e3, "online": cost["online"][at] * 1e3,
            "ratio": cost["dense"][at] / cost["linear"][at], "online_mb": cost["online_bytes"][at] / 2 ** 20,
            "dense_mb": cost["dense_bytes"][at] / 2 ** 20}


RARE_SHARE = 0.5     # a measured error below half the theory's: the draws missed the rare values that make it up
OVER_SHARE = 2.0     # above twice it: the draws met some of them
SLOPE_OFF = 0.15     # a measured slope farther than this from -0.5 does not follow the law


def feature_error_summary(err: dict) -> dict:
    """What the random-feature error text and its question say: the factor 4× the features divide the measured
    error by (4^−slope), the orthogonal share and whether orthogonality helps (a share below 0.9), and how the
    measured iid curve misses the exact theory, whichever way: ``log10_ratio`` (measured / theory at the largest
    m), ``rare`` (below ``RARE_SHARE``), ``over`` (above ``OVER_SHARE``), ``off_slope`` (slope farther than
    ``SLOPE_OFF`` from −0.5), and ``miss``, the reason said (None when the curve follows the theory)."""
    log_ratio = math.log10(err["iid"][-1]) - float(err["log10_theory"][-1])
    rare, over = log_ratio < math.log10(RARE_SHARE), log_ratio > math.log10(OVER_SHARE)
    off_slope = abs(err["slope"] + 0.5) > SLOPE_OFF
    miss = "ef.off_under" if rare else "ef.off_over" if over else "ef.off_slope" if off_slope else None
    return {"factor": 4.0 ** -err["slope"], "helps": err["orth_share"] < 0.9, "rare": rare, "over": over,
            "off_slope": off_slope, "log10_ratio": log_ratio, "miss": miss}


def _miss(err: Mapping, feat: Mapping) -> Message:
    return Message(feat["miss"], slope=err["slope"], draws=err["draws"])


@says("ef.zoo_text")
def zoo_text(zoo: Mapping) -> Say:
    """Under the zoo: how far the random-feature weights and fit are from the exact ones, and how flat elu + 1 is."""
    return Say("ef.zoo_text", w_err=zoo["weight_error"], f_err=zoo["fit_error"], spread=zoo["elu_spread"])


@says("ef.predict_why", "ef.predict_miss", "ef.off_under", "ef.off_over", "ef.off_slope")
def question(err: Mapping, kind: str) -> Question:
    """"With 4× the features, what happens to the kernel estimate's RMS error?": halved (σ/√m), the measured slope
    and factor quoted, with why the measured curve does not show it wherever it misses the theory (either way)."""
    feat = feature_error_summary(err)
    caveat = Message("ef.predict_miss", reason=_miss(err, feat)) if feat["miss"] else ""
    return Question("ef.gain", Say("ef.predict_q", kind=Message(f"ef.kind_{kind}")),
                    tuple(Say(f"ef.gain_{i}") for i in range(3)), 1,
                    Say("ef.predict_why", slope=err["slope"], factor=feat["factor"], caveat=caveat))


ORTH_HURTS = 1.1     # orthogonal directions "do worse" from this share of the iid error up


@says("ef.error_text", "ef.orth_helps", "ef.orth_barely", "ef.orth_hurts", "ef.error_miss")
def error_text(err: Mapping) -> list[Say]:
    """Under the error figure: the measured slope and what orthogonal directions do (help below 0.9 of the iid
    error, do worse from ``ORTH_HURTS``: positive features at a wide kernel give up to 4× it)."""
    feat = feature_error_summary(err)
    clause = "ef.orth_helps" if feat["helps"] else "ef.orth_hurts" if err["orth_share"] >= ORTH_HURTS else \
        "ef.orth_barely"
    said = [Say("ef.error_text", slope=err["slope"], share=err["orth_share"], orth_clause=Message(clause),
                n_keys=err["n_keys"], draws=err["draws"])]
    if feat["miss"]:              # the dotted line is exact, and this measured curve is not on it: say which way
        said.append(Say("ef.error_miss", measured=err["iid"][-1], theory=scientific(float(err["log10_theory"][-1])),
                        ratio=scientific(feat["log10_ratio"]), reason=_miss(err, feat)))
    return said


@says("ef.positive_text", "ef.positive_rare")
def positive_text(err: Mapping, kind: str) -> list[Say]:
    """Positive features only, one caption: how the measured curve compares with the exact theory."""
    if kind != "positive":
        return []
    out = [Say("ef.positive_text", tone="caption", reach=err["reach"], theory=scientific(err["log10_theory"][-1]),
               measured=err["iid"][-1])]
    if feature_error_summary(err)["rare"]:
        out.append(Say("ef.positive_rare", tone="caption"))
    return out


@says("ef.online_text")
def online_text(row: Mapping, step: int, total: int) -> Say:
    """The online softmax after ``step`` of ``total`` blocks: running max, rescale, sum, partial estimate, and the
    final estimate's gap to the full softmax; the bytes a dense implementation writes."""
    return Say("ef.online_text", k=step, total=total, m=row["max"][step - 1], rescale=row["rescale"][step - 1],
               sum=row["sum"][step - 1], partial=row["estimate"][step - 1], diff=abs(row["final"] - row["exact"]),
               n_q=row["n_queries"], n=len(row["x"]), dense=byte_size(row["dense_bytes"]),
               stream=byte_size(row["stream_bytes"]))


@says("ef.rnn_text")
def rnn_text(rnn: Mapping) -> Say:
    return Say("ef.rnn_text", d=rnn["d"], diff=rnn["max_diff"], t=len(rnn["states"]))


@says("ef.cost_text", "ef.cost_never", fixed="this machine's timings: the crossover and times are those measured "
                                             "(checked on made-up rows)")
def cost_text(cost: Mapping) -> Say:
    s = cost_summary(cost)
    if s is None:
        return Say("ef.cost_never", dense_max=DENSE_MAX)
    return Say("ef.cost_text", cross=s["cross"], n_max=s["n_max"], dense=s["dense"], linear=s["linear"],
               ratio=s["ratio"], online=s["online"], online_mb=s["online_mb"], dense_mb=s["dense_mb"],
               dense_max=DENSE_MAX)


@says("ef.notice")
def notice() -> Say:
    return Say("ef.notice")


@says("ef.formula_text", fixed="the random-feature identity E[φ(q)·φ(k)] = exp(q·k): a formula, checked by "
                               "Monte Carlo")
def formula_text() -> Say:
    return Say("ef.formula_text")


def step_of(values: Mapping[str, Any], data: Mapping) -> int:
    """The online softmax's step as drawn: the slider's value, at most the number of blocks."""
    return min(values[STEP.key], n_blocks(data, values[BLOCK.key]))


def sentences(values: Mapping[str, Any], data: Mapping | None = None) -> list[Say]:
    """Everything the page says at ``values`` (the measured cost aside: it is timed on demand), in its order."""
    data = data_of(values) if data is None else data
    specs_ = figures(values, data)
    err, kind = specs_["efficient_error"].data(), values[KIND.key]
    return flatten([zoo_text(specs_["efficient_zoo"].data()), question(err, kind).why, error_text(err),
                    positive_text(err, kind),
                    online_text(specs_["online_logits"].data(), step_of(values, data),
                                n_blocks(data, values[BLOCK.key])),
                    rnn_text(specs_["rnn_state"].data()), notice(), formula_text()])


@says("ef.orth_help", fixed="how orthogonal directions are drawn: blocks of 16 with Gaussian lengths, checked on "
                          "the map")
def help_texts() -> list[Say]:
    """The help texts of this lesson's controls that state a fact (shown with the widgets, from their ``Param``)."""
    return [Say("ef.orth_help")]


@says("ef.measure_help", fixed="what the button measures and where: the software")
def measure_help() -> Say:
    """The help of the button that times the three implementations on this machine."""
    return Say("ef.measure_help")
