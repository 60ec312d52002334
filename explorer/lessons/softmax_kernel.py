"""Softmax is a kernel: dot-product attention against Gaussian-kernel attention, and exactly when they agree.

exp(q·k/τ) = exp(−‖q − k‖²/(2τ)) · exp(‖q‖²/(2τ)) · exp(‖k‖²/(2τ)): the query's factor cancels in the softmax, the
key's does not, so the two agree when every key has the same norm. Figures: the two weight matrices side by side,
their gap against the spread of key norms, the temperature's and the bandwidth's effect on a row, top-k attention,
a bandwidth learned by gradient descent and a learned attention layer against NW.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np
import torch

from .. import bridge
from ..attention import topk_attention
from ..bandwidth import select_bandwidth
from ..figures import common
from ..figures import regression as rfig
from ..figures.answer import mark_answer
from ..i18n import Message, t
from ..kernels import ignores_h
from ..learned import fit_parametric_attention, learn_bandwidth
from ..regression import defined_mse, nadaraya_watson, nw_weights
from .base import Question, Say, figure_table, flatten, says, specs
from .params import Param, seed_param
from .shared import BANDWIDTH, KERNEL, SHARED, TEMPERATURES, data_of

D = Param("sk.d", "slider", 16, "sk.d", "sk.d_help", lo=1, hi=256)
N_KEYS = Param("sk.n_keys", "slider", 24, "sk.n_keys", "sk.n_keys_help", lo=2, hi=128)
SPREAD = Param("sk.spread", "slider", 0.0, "sk.spread", "sk.spread_help", lo=0.0, hi=1.0, step=0.05)
SEED = seed_param("sk.seed")
TAU_SQRT_D = Param("sk.tau_sqrt_d", "toggle", True, "sk.tau_sqrt_d")
TAU = Param("sk.tau", "select_slider", min(TEMPERATURES, key=lambda v: abs(math.log(v / 4))), "sk.tau",
            options=tuple(TEMPERATURES), fmt="g")
K_TOP = Param("sk.k_top", "slider", 4, "sk.k_top", "sk.k_top_help", lo=1, hi=128)
NW_FORM = Param("sk.nw_form", "toggle", True, "sk.nw_form", "sk.nw_form_help")
HIDDEN = Param("sk.hidden", "slider", 4, "sk.hidden", "sk.hidden_help", lo=2, hi=16)
PARAMS = (*SHARED, D, N_KEYS, SPREAD, SEED, TAU_SQRT_D, TAU, K_TOP, NW_FORM, HIDDEN)
FILE_NAME = ((D, "d{}"), (SPREAD, "spread{}"))
MAIN = "softmax_vs_kernel"
N_QUERIES = 16                  # the random queries of the side-by-side matrices
LEARN_MAX_POINTS = 300          # gradient descent on h and the attention layer see at most this many points
SPREADS = np.linspace(0, 1, 21)
FIGURES, figure = figure_table()


def temperature(values: Mapping[str, Any]) -> float:
    """τ: √d when the toggle says so, else the temperature slider's."""
    return math.sqrt(values[D.key]) if values[TAU_SQRT_D.key] else values[TAU.key]


# --------------------------------------------------------------------------- figures
def _bridge(d: int, n_keys: int, spread: float, tau: float, seed: int, n_queries: int = N_QUERIES) -> dict:
    """Dot-product and Gaussian-kernel attention on the same random q, k, v, and what the page says of them."""
    q, k, v = bridge.random_qkv(d, n_queries, n_keys, spread, seed)
    c = bridge.compare(q, k, v, tau)
    return {"dot": c["dot"].numpy(), "gauss": c["gauss"].numpy(), "max_diff": c["max_diff"],
            "max_diff_corrected": c["max_diff_corrected"], "key_norms": c["key_norms"].numpy(), "tau": tau,
            "n_keys": n_keys, "tau_sweep": bridge.temperature_sweep(q, k, bridge.log_grid(0.01, 1000, 61)),
            "topk_curve": bridge.topk_error_curve(q, k, v, tau)}


@figure("softmax_vs_kernel", _bridge, marks=("answer",))
def _draw_bridge(r: dict, lang: str):
    """Mark ``answer``: a label pointing at the cell where the two panels differ most (the question's answer)."""
    tau = r["tau"]
    fig = common.heatmap_grid([r["dot"], r["gauss"]], [t("sk.dot_title", lang, tau=tau),
                                                       t("sk.gauss_title", lang, sigma=np.sqrt(tau))],
                              None, None, t("sk.side_title", lang), t("sk.key_j", lang), t("sk.query_i", lang),
                              cols=2, height=380, colorbar_title=t("fig.weight", lang), lang=lang)
    if r.get("answer"):
        row, col = np.unravel_index(np.argmax(np.abs(r["dot"] - r["gauss"])), r["dot"].shape)
        mark_answer(fig, int(col), int(row), r["answer"], axes=("x2", "y2"), above=row > r["dot"].shape[0] / 3)
    return fig


def _spread_curve(d: int, n_keys: int, tau: float, seed: int) -> dict:
    """The dot-vs-Gaussian gap for key-norm spreads 0 to 1 (it does not depend on the current spread)."""
    return {"curve": bridge.difference_vs_spread(d, N_QUERIES, n_keys, tau, SPREADS, seed)}


@figure("spread_curve", _spread_curve, marks=("spread",))
def _draw_spread_curve(r: dict, lang: str):
    """Mark ``spread``: the current spread."""
    c = r["curve"]
    corrected = c["max_abs_diff_corrected"].clip(lower=1e-18)        # 0 on a log axis: drawn at 1e-18
    return common.lines(c["norm_spread"], {t("sk.max_diff", lang): c["max_abs_diff"],
                                           t("sk.max_diff_corrected", lang): corrected},
                        t("sk.gap_title", lang), t("sk.gap_x", lang), t("sk.gap_y", lang), log_y=True,
                        mode="lines+markers", vlines=[(r["spread"], t("sk.current", lang))], height=360)


@figure("tau_sweep", _bridge)
def _draw_tau_sweep(r: dict, lang: str):
    sweep, log_n = r["tau_sweep"], math.log(r["n_keys"])
    series = {t("sk.entropy_frac", lang): sweep["entropy"] / log_n, t("sk.max_weight", lang): sweep["max_weight"]}
    return common.lines(sweep["tau"], series, t("sk.tau_title", lang), t("sk.tau_x", lang), t("sk.fraction", lang),
                        log_x=True, vlines=[(r["tau"], f"τ = {r['tau']:.3g}")], height=360)


def _nw_entropy(data: Mapping, kernel: str) -> dict:
    """Mean row entropy and largest weight of NW on the data, against h (every 4th grid query)."""
    grid, x = torch.as_tensor(data["x_grid"]), torch.as_tensor(data["x"])
    return {"sweep": bridge.nw_entropy_sweep(grid[::4], x, kernel, bridge.log_grid(0.01, 20, 41)), "n": len(x),
            "kernel": kernel}


@figure("h_sweep", _nw_entropy, marks=("h",))
def _draw_h_sweep(r: dict, lang: str):
    """Mark ``h``: the current bandwidth."""
    nw, log_n = r["sweep"], math.log(r["n"])
    series = {t("sk.entropy_frac", lang): nw["entropy"] / log_n, t("sk.max_weight", lang): nw["max_weight"]}
    return common.lines(nw["bandwidth"], series, t("sk.h_title", lang), t("sk.h_axis", lang), t("sk.fraction", lang),
                        log_x=True, vlines=[(r["h"], t("fig.current_h", lang))], height=360)


@figure("topk_curve", _bridge, marks=("k_top",))
def _draw_topk_curve(r: dict, lang: str):
    """Mark ``k_top``: the current k."""
    topk = r["topk_curve"]
    return common.lines(topk["k_top"], {t("sk.topk_out", lang): topk["max_abs_output_error"].clip(lower=1e-17),
                                        t("sk.topk_w", lang): topk["mean_weight_l1_error"].clip(lower=1e-17)},
                        t("sk.topk_title", lang), t("sk.topk_x", lang), t("sk.topk_y", lang), log_y=True,
                        mode="lines+markers", vlines=[(r["k_top"], t("sk.current", lang))], height=380)


def _topk(d: int, n_keys: int, spread: float, tau: float, seed: int, k_top: int) -> dict:
    q, k, v = bridge.random_qkv(d, N_QUERIES, n_keys, spread, seed)
    return {"weights": topk_attention(q, k, v, k_top, tau)[1].numpy(), "k_top": k_top}


@figure("topk_heatmap", _topk)
def _draw_topk(r: dict, lang: str):
    return common.heatmap(r["weights"], None, None, t("sk.topk_heat", lang, k=r["k_top"]), t("sk.key_j", lang),
                          t("sk.query_i", lang), height=380, colorbar_title=t("fig.weight", lang), lang=lang)


def _subsample(x: np.ndarray, y: np.ndarray):
    if len(x) <= LEARN_MAX_POINTS:
        return x, y
    idx = np.linspace(0, len(x) - 1, LEARN_MAX_POINTS).round().astype(int)
    return x[idx], y[idx]


def _learned(data: Mapping) -> dict:
    """The bandwidth learned by gradient descent on the NW loss, with and without leave-one-out."""
    x, y = _subsample(data["x"], data["y"])
    return {"n_used": len(x), "loo": learn_bandwidth(x, y, leave_one_out=True),
            "no_loo": learn_bandwidth(x, y, leave_one_out=False), "optimum": select_bandwidth(x, y, "gaussian")}


@figure("learned_h", _learned)
def _draw_learned_h(lb: dict, lang: str):
    loo, no_loo = lb["loo"], lb["no_loo"]
    return common.lines(loo["step"], {t("sk.loo", lang): loo["h"], t("sk.sees_itself", lang): no_loo["h"]},
                        t("sk.h_gd_title", lang), t("sk.adam_step", lang), t("sk.h_axis", lang), log_y=True,
                        hlines=[(lb["optimum"], t("sk.grid_optimum", lang, h=lb["optimum"]))], height=360)


@figure("learned_loss", _learned)
def _draw_learned_loss(lb: dict, lang: str):
    loo, no_loo = lb["loo"], lb["no_loo"]
    return common.lines(loo["step"], {t("sk.loo", lang): loo["loss"], t("sk.sees_itself", lang): no_loo["loss"]},
                        t("sk.train_loss", lang), t("sk.adam_step", lang), t("sk.mse_axis", lang), log_y=True,
                        height=360)


def param_picks(m: int) -> list[int]:
    """Indices of the three queries whose weight rows the parametric-layer figure shows."""
    return [int(m * f) for f in (0.2, 0.5, 0.8)]


def _parametric(data: Mapping, hidden: int, nw_form: bool, seed: int) -> dict:
    """A trained attention layer (q, k of ``hidden`` units) against NW with the LOO-optimal Gaussian h."""
    x, y = _subsample(data["x"], data["y"])
    model, losses = fit_parametric_attention(x, y, hidden=hidden, seed=seed, nw_form=nw_form)
    xt, yt, grid = torch.as_tensor(x), torch.as_tensor(y), torch.as_tensor(data["x_grid"])
    with torch.no_grad():
        pred, w = model(grid, xt, yt)
    h_opt = select_bandwidth(x, y, "gaussian")
    return {**data, "x_used": x, "losses": losses, "pred": pred.numpy(), "weights": w.numpy(), "h_opt": h_opt,
            "gauss_weights": nw_weights(grid, xt, "gaussian", h_opt).numpy(), "picks": param_picks(len(grid)),
            "nw_pred": nadaraya_watson(grid, xt, yt, "gaussian", h_opt).numpy()}


@figure("param_rows", _parametric)
def _draw_param_rows(pf: dict, lang: str):
    picks = pf["picks"]
    return common.heatmap_grid([pf["weights"][picks], pf["gauss_weights"][picks]],
                               [t("sk.learned_layer", lang), t("sk.gauss_h", lang, h=pf["h_opt"])],
                               np.round(pf["x_used"], 2), [f"x = {pf['x_grid'][i]:.2f}" for i in picks],
                               t("sk.rows_title", lang), t("ah.key_short", lang), t("sk.query", lang), cols=2,
                               height=300, colorbar_title=t("fig.weight", lang), lang=lang)


@figure("param_fit", _parametric)
def _draw_param_fit(pf: dict, lang: str):
    return rfig.fit_figure(pf["x"], pf["y"], pf["x_grid"], pf["true"],
                           {t("sk.learned_layer", lang): pf["pred"],
                            t("sk.nw_gauss", lang, h=pf["h_opt"]): pf["nw_pred"]},
                           title=t("sk.fits", lang), lang=lang)


def figures(values: Mapping[str, Any], data: Mapping | None = None) -> dict:
    """The page's figures at ``values``; ``data``: the dataset's arrays (an upload's), else generated."""
    data = data_of(values) if data is None else data
    d, n_keys, spread, seed, tau = values[D.key], values[N_KEYS.key], values[SPREAD.key], values[SEED.key], \
        temperature(values)
    k_top = min(values[K_TOP.key], n_keys)              # the slider stops at the number of keys
    pair = {"d": d, "n_keys": n_keys, "spread": spread, "tau": tau, "seed": seed}
    parametric = {"data": data, "hidden": values[HIDDEN.key], "nw_form": values[NW_FORM.key],
                  "seed": values["data.seed"]}
    return specs(__name__.rsplit(".", 1)[-1], FIGURES, {
        "softmax_vs_kernel": pair,
        "spread_curve": ({"d": d, "n_keys": n_keys, "tau": tau, "seed": seed}, {"spread": spread}),
        "tau_sweep": pair,
        "h_sweep": ({"data": data, "kernel": values[KERNEL.key]}, {"h": values[BANDWIDTH.key]}),
        "topk_curve": (pair, {"k_top": k_top}),
        "topk_heatmap": {**pair, "k_top": k_top},
        "learned_h": {"data": data},
        "learned_loss": {"data": data},
        "param_rows": parametric,
        "param_fit": parametric,
    })


# --------------------------------------------------------------------------- what the page says
def wrong_widths(d: int, tau: float) -> dict:
    """The two widths often quoted for softmax-as-a-Gaussian, against the right sigma = sqrt(tau):
    sqrt(tau / 2) is always narrower; sqrt(d / 2) is wider, narrower or (by chance) equal."""
    sigma, half_d = math.sqrt(tau), math.sqrt(d / 2)
    effect = "same_width" if math.isclose(half_d, sigma, rel_tol=1e-9) else "too_wide" if half_d > sigma \
        else "too_narrow"
    return {"sigma": sigma, "half_tau": math.sqrt(tau / 2), "half_d": half_d, "half_d_effect": effect}


def gap_size(max_diff: float) -> int:
    """0: equal up to rounding (< 1e-9), 1: close (< 0.05), 2: clearly different."""
    return 0 if max_diff < 1e-9 else 1 if max_diff < 0.05 else 2


def mass_kept(topk_curve, k_top: int) -> float:
    """The share of the dense weights the k largest keep (mean over the queries)."""
    return float(topk_curve.loc[topk_curve["k_top"] == k_top, "dense_mass_kept"].iloc[0])


LEARNED_NEAR = 1.1      # a learned h within 10 % of the grid's LOO optimum is "next to" it
LOCAL_REACH = 2.0       # a learned row is local when its largest weight lies within 2 LOO-optimal h of its query


def learned_summary(learned: dict) -> dict:
    """What the learned-bandwidth text quotes: the h gradient descent ends at with and without leave-one-out,
    the grid optimum of the same points, their ratio, and whether the learned one is next to the optimum."""
    h_loo, h_opt = float(learned["loo"]["h"].iloc[-1]), float(learned["optimum"])
    ratio = h_loo / h_opt
    return {"h_loo": h_loo, "h_opt": h_opt, "h_self": float(learned["no_loo"]["h"].iloc[-1]), "ratio": ratio,
            "near": abs(math.log(ratio)) <= math.log(LEARNED_NEAR), "steps": int(learned["loo"]["step"].iloc[-1]),
            "n": learned["n_used"]}


def parametric_summary(fit: dict, data: dict) -> dict:
    """What the parametric-layer text quotes: for the three shown queries, how far each one's largest
    weight lies from it (the largest such distance, and that query with where its top weight sits), and
    the learned and NW fits' errors against the true function."""
    x, grid = np.asarray(fit["x_used"]), np.asarray(data["x_grid"])       # the keys the weights are over
    picks = param_picks(len(grid))
    tops = [float(x[int(np.argmax(fit["weights"][i]))]) for i in picks]
    dists = [abs(top - float(grid[i])) for top, i in zip(tops, picks, strict=True)]
    far = int(np.argmax(dists))
    truth = data["true"]
    return {"max_top_distance": max(dists), "far_query": float(grid[picks[far]]), "far_top": tops[far],
            "reach": LOCAL_REACH * float(fit["h_opt"]), "local": max(dists) <= LOCAL_REACH * float(fit["h_opt"]),
            "mse": defined_mse(fit["pred"], truth)[0] if truth is not None else math.nan,
            "nw_mse": defined_mse(fit["nw_pred"], truth)[0] if truth is not None else math.nan}


@says("sk.predict_why")
def question(res: Mapping, spread: float) -> Question:
    """"With this spread of key norms, how far apart are the two weight matrices?", answered by their largest gap."""
    norms = res["key_norms"]
    return Question("sk.gap", Say("sk.predict_q", spread=spread), tuple(Say(f"sk.gap_{i}") for i in range(3)),
                    gap_size(res["max_diff"]),
                    Say("sk.predict_why", diff=res["max_diff"], lo=float(norms.min()), hi=float(norms.max())))


def answer_mark(q: Question, res: Mapping) -> Say:
    """The revealed answer as the side-by-side figure marks it: the largest gap, at the cell where it is (the verdict
    over the figure names the answer ``q``; a label in a panel this small must stay short)."""
    return Say("sk.answer_mark", diff=res["max_diff"])


@says("sk.explain", "sk.explain_coincide")
def explain(d: int, tau: float) -> Say:
    """Why the q factor cancels and the k factor does not; the right width σ = √τ against the two often quoted: both
    wrong, or (where τ = d/2, e.g. d = 4 at τ = √d) √(d/2) equal to the right one by coincidence, and said so."""
    wrong = wrong_widths(d, tau)
    key = "sk.explain_coincide" if wrong["half_d_effect"] == "same_width" else "sk.explain"
    return Say(key, tau=tau, sigma=math.sqrt(tau), half_tau=wrong["half_tau"], half_d=wrong["half_d"],
               half_d_effect=Message(f"sk.{wrong['half_d_effect']}"))


@says("sk.equal", "sk.unequal")
def identity_text(res: Mapping, d: int, spread: float) -> Say:
    """Whether the two matrices agree here: to rounding when every key has norm √d, else by how much, and after the
    per-key bias."""
    if spread == 0:
        return Say("sk.equal", tone="success", r=math.sqrt(d), diff=res["max_diff"])
    return Say("sk.unequal", tone="info", diff=res["max_diff"], fixed=res["max_diff_corrected"])


@says("sk.temp_text", "sk.temp_text_ties", "sk.temp_text_flat_h", "sk.temp_support")
def temp_text(res: Mapping, nw: Mapping) -> list[Say]:
    """What the smallest temperature and bandwidth do to the rows (``nw``: the h sweep's data): towards one key, or,
    where the mean max weight stays below 1/2, towards several that tie. A kernel that ignores h (the constant one)
    gives every key 1/N at every h, and is said so. Where some queries have no training point within the smallest h
    (a compact kernel), the means are over the others, and the sentence says how many those are."""
    sweep, hs = res["tau_sweep"], nw["sweep"]
    mw_tau, mw_h = float(sweep["max_weight"].iloc[0]), float(hs["max_weight"].iloc[0])
    tau_lo, h_lo = sweep["tau"].iloc[0], hs["bandwidth"].iloc[0]
    if ignores_h(nw["kernel"]):
        return [Say("sk.temp_text_flat_h", mw_tau=mw_tau, tau_lo=tau_lo, kernel=Message(f"kernel.{nw['kernel']}"),
                    w=1 / nw["n"], n=nw["n"])]
    main = Say("sk.temp_text" if min(mw_tau, mw_h) > 0.5 else "sk.temp_text_ties", mw_tau=mw_tau, tau_lo=tau_lo,
               mw_h=mw_h, h_lo=h_lo)
    share = float(hs["supported"].iloc[0])
    return [main] if share == 1 else [main, Say("sk.temp_support", h_lo=h_lo, share=share)]


@says("sk.topk_text")
def topk_text(res: Mapping, k_top: int, n_keys: int) -> Say:
    return Say("sk.topk_text", k=k_top, n=n_keys, kept=mass_kept(res["topk_curve"], k_top))


@says("sk.learned_text", "sk.learned_text_far")
def learned_text(lb: Mapping) -> Say:
    """Where gradient descent on h ends, with and without leave-one-out, against the grid's optimum."""
    s = learned_summary(lb)
    return Say("sk.learned_text" if s["near"] else "sk.learned_text_far", h_loo=s["h_loo"], h_opt=s["h_opt"],
               h_self=s["h_self"], ratio=s["ratio"], n=s["n"], steps=s["steps"])


@says("sk.param_text_free", "sk.param_text_nw", "sk.param_text_nw_drift")
def param_text(pf: Mapping, data: Mapping, nw_form: bool) -> Say:
    """What the learned attention layer's rows and fit show, free or in NW form."""
    s = parametric_summary(pf, data)
    key = "sk.param_text_free" if not nw_form else "sk.param_text_nw" if s["local"] else "sk.param_text_nw_drift"
    return Say(key, dist=s["max_top_distance"], reach=s["reach"], mse=s["mse"], nw_mse=s["nw_mse"],
               x=s["far_query"], x_top=s["far_top"])


@says("sk.notice")
def notice() -> Say:
    return Say("sk.notice")


def sentences(values: Mapping[str, Any], data: Mapping | None = None) -> list[Say]:
    """Everything the page says at ``values``, in its order."""
    data = data_of(values) if data is None else data
    specs_ = figures(values, data)
    res = specs_["softmax_vs_kernel"].data()
    d, spread, n_keys = values[D.key], values[SPREAD.key], values[N_KEYS.key]
    return flatten([question(res, spread).why, explain(d, temperature(values)), identity_text(res, d, spread),
                    temp_text(res, specs_["h_sweep"].data()), topk_text(res, min(values[K_TOP.key], n_keys), n_keys),
                    learned_text(specs_["learned_h"].data()),
                    param_text(specs_["param_rows"].data(), data, values[NW_FORM.key]), notice()])


@says("sk.nw_form_help", fixed="what the switch does to the layer: its architecture")
def help_texts() -> list[Say]:
    """The help texts of this lesson's controls that state a fact (shown with the widgets, from their ``Param``)."""
    return [Say("sk.nw_form_help")]
