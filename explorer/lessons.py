"""The numbers behind the sentences the pages say about their figures.

Each function here computes what a "what to notice" line, a caption or a verdict asserts, from the same
data the figure draws; pages fill their sentences from these results, and ``tests/lessons/`` checks the
sentences against them at the pages' defaults. Nothing here imports streamlit.
"""

from __future__ import annotations

import math

import numpy as np

from .regression import defined_mse

PRESET_MARGIN = 1.5     # a preset "over-fits" / "over-smooths" when its error is at least 1.5x the good one's


def curve_mse(estimate, true_values) -> float:
    """Mean squared error of an estimate against the true function where the estimate is defined."""
    return defined_mse(estimate, true_values)[0]


def preset_verdict(mse: dict[str, float]) -> bool:
    """True when the labels hold on this data: the "good" preset's error against the true function is
    at least ``PRESET_MARGIN`` times lower than both the over-fit and the over-smooth one's."""
    good = mse["good"]
    return bool(np.isfinite(good) and mse["over-fit"] > PRESET_MARGIN * good
                and mse["over-smooth"] > PRESET_MARGIN * good)


def causal_ceiling(T: int) -> float:
    """log(T!) / T: the mean entropy of uniform causal rows over T positions."""
    return math.lgamma(T + 1) / T


def width_agreement(optima: dict[str, float]) -> dict:
    """How far apart the kernels' LOO-optimal bandwidths are, raw and in Gaussian units (each optimum times
    δ_Gauss/δ_K, the width it stands for): the smallest and largest in Gaussian units (``lo``, ``hi``), the ratio
    of largest to smallest in those units (``units``) and of the raw optima (``raw``), and whether putting them in
    Gaussian units brings them closer (``closer``)."""
    from .kernels import equivalent_bandwidth
    raw = list(optima.values())
    gauss = [h / equivalent_bandwidth(1.0, k) for k, h in optima.items()]
    units = max(gauss) / min(gauss)
    return {"lo": min(gauss), "hi": max(gauss), "units": units, "raw": max(raw) / min(raw),
            "closer": units < max(raw) / min(raw)}


def loo_ends(bandwidths, scores) -> dict:
    """What the LOO curve's caption quotes: the smallest bandwidth with a score and the largest, and each one's
    error as a multiple of the curve's minimum."""
    h, s = np.asarray(bandwidths, dtype=float), np.asarray(scores, dtype=float)
    ok = np.isfinite(s)
    best = s[ok].min()
    first = int(np.flatnonzero(ok)[0])
    return {"h_lo": h[first], "r_lo": s[first] / best, "h_hi": h[-1], "r_hi": s[-1] / best}


def snap_error(grid) -> float:
    """The largest relative distance from a value inside the grid's range to its nearest grid value
    on a log scale (half the largest log gap between neighbours)."""
    g = np.sort(np.asarray(grid, dtype=float))
    return float(np.sqrt(g[1:] / g[:-1]).max() - 1)


def heatmap_regimes(x_train, kernel: str, x_query, small_h: float = 0.01, large_h: float = 10.0) -> dict:
    """What the heatmap looks like at the two ends of the bandwidth slider: mean row entropy (over rows
    with support) and mean largest weight of a row at a small and a large h, and at the large h the largest ratio
    between the biggest and smallest weight of a row (1 = a perfectly flat row)."""
    import torch

    from .attention import entropy
    from .regression import nw_weights
    out = {"small_h": small_h, "large_h": large_h}
    for tag, h in (("small", small_h), ("large", large_h)):
        w = nw_weights(torch.as_tensor(x_query), torch.as_tensor(x_train), kernel, h)
        ok = w.sum(-1) > 0
        out[f"entropy_{tag}"] = float(entropy(w[ok]).mean()) if bool(ok.any()) else math.nan
        out[f"max_weight_{tag}"] = float(w[ok].amax(-1).mean()) if bool(ok.any()) else math.nan
        if tag == "large":
            rows = w[ok]
            out["row_ratio_large"] = float((rows.amax(-1) / rows.amin(-1)).max()) if bool(ok.any()) else math.nan
    return out


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
    import torch

    from .kernels import get_kernel
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


def param_picks(m: int) -> list[int]:
    """Indices of the three queries whose weight rows the parametric-layer figure shows."""
    return [int(m * f) for f in (0.2, 0.5, 0.8)]


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
            "mse": curve_mse(fit["pred"], truth) if truth is not None else math.nan,
            "nw_mse": curve_mse(fit["nw_pred"], truth) if truth is not None else math.nan}


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


def wrong_widths(d: int, tau: float) -> dict:
    """The two widths often quoted for softmax-as-a-Gaussian, against the right sigma = sqrt(tau):
    sqrt(tau / 2) is always narrower; sqrt(d / 2) is wider, narrower or (by chance) equal."""
    sigma, half_d = math.sqrt(tau), math.sqrt(d / 2)
    effect = "same_width" if math.isclose(half_d, sigma, rel_tol=1e-9) else "too_wide" if half_d > sigma \
        else "too_narrow"
    return {"sigma": sigma, "half_tau": math.sqrt(tau / 2), "half_d": half_d, "half_d_effect": effect}


SCORE_WINDOW = 10     # the score table averages each head's metrics over the last 10 steps

# What the induction task's models do at its defaults after 600 steps, seeds 0-9, on the page's evaluation batch
# (tests/lessons/test_live_training.py trains all ten and checks every number): nine form the textbook pair, seed 3
# reaches the same loss another way.
INDUCTION_SEEDS = {
    "odd": (3,),
    "prev": (0.70, 0.88),          # best layer-0 prevtok of the nine (first copy)
    "ind": (0.96, 0.98),           # both layer-1 heads' induction score, the nine
    "l1_copy": (1.00, 1.00),       # layer-1 copying scores, the nine
    "l0_copy": (0.61, 0.97),       # layer-0 copying scores, the nine
    "odd_copy": (-0.97, -0.07),    # seed 3's layer-1 copying scores
}
COVER_ALONE, COVER_TOGETHER = 0.25, 0.5     # cover: each alone < 25 %, all together > 50 % of the gap


def cover(alone: list[float], together: float, gap: float) -> dict:
    """Whether a layer's heads cover for each other: each switched off alone raises the loss by less than
    ``COVER_ALONE`` of the untrained-to-trained ``gap``, all together by more than ``COVER_TOGETHER`` of it."""
    alone_share = max(alone) / gap if gap > 0 else math.nan
    together_share = together / gap if gap > 0 else math.nan
    return {"alone": alone_share, "together": together_share,
            "covers": bool(alone_share < COVER_ALONE and together_share > COVER_TOGETHER)}


def score_table(history, n_layers: int, n_heads: int, lang: str = "en", scores: bool = True,
                baseline: dict | None = None):
    """One row per head: mean entropy and (``scores``: token tasks) the previous-token and induction scores
    over the last steps; ``baseline`` (entropy, prevtok, induction of uniform attention) adds a last row for it."""
    import pandas as pd

    from .i18n import t
    tail = history.iloc[-SCORE_WINDOW:]
    rows = []
    for layer in range(n_layers):
        for h in range(n_heads):
            row = {t("lt.col_head", lang): t("fig.layer_head", lang, layer=layer, head=h),
                   t("lt.col_entropy", lang): round(float(tail[f"entropy_l{layer}_h{h}"].mean()), 3)}
            if scores:
                row[t("lt.col_prevtok", lang)] = round(float(tail[f"prevtok_l{layer}_h{h}"].mean()), 3)
                row[t("lt.col_induction", lang)] = round(float(tail[f"induction_l{layer}_h{h}"].mean()), 3)
            rows.append(row)
    if baseline is not None:
        row = {t("lt.col_head", lang): t("lt.uniform_row", lang),
               t("lt.col_entropy", lang): round(float(baseline["entropy"]), 3)}
        if scores:
            row[t("lt.col_prevtok", lang)] = round(float(baseline["prevtok"]), 3)
            row[t("lt.col_induction", lang)] = round(float(baseline["induction"]), 3)
        rows.append(row)
    return pd.DataFrame(rows)


def fit_table(curves: list[dict], n_grid: int, lang: str = "en"):
    """The Kernel regression readout as a table, one row per curve of the fit figure: its label, the MSE against
    the true function (blank for an upload) and how many of the ``n_grid`` queries have no estimate."""
    import pandas as pd

    from .figures.registry import curve_label
    from .i18n import t
    return pd.DataFrame([{t("kr.col_curve", lang): curve_label(c, lang),
                          t("kr.col_mse", lang): None if c["mse"] is None else round(float(c["mse"]), 4),
                          t("kr.col_undefined", lang): f"{c['undefined']} / {n_grid}"} for c in curves])


def icl_view(example: dict, maps: list[np.ndarray]) -> dict:
    """The sine_icl example as the page draws it: queries (rows) and context points (columns) each sorted by
    x, so a head that weights nearby x draws a diagonal band as in the NW heatmap; NW's estimate at the
    queries from the same context, with h chosen by leave-one-out on the context; both errors."""
    import torch

    from .regression import nadaraya_watson, select_bandwidth
    feats = np.asarray(example["inputs"])
    x = feats[:, 0] * 3
    y = np.asarray(example["targets"], dtype=float)
    is_query = np.asarray(example["loss_mask"], dtype=bool)
    ctx, qry = np.flatnonzero(~is_query), np.flatnonzero(is_query)
    ctx, qry = ctx[np.argsort(x[ctx])], qry[np.argsort(x[qry])]
    sub = [m[:, qry][:, :, ctx] for m in maps]                           # (H, queries, context) per layer
    h = select_bandwidth(x[ctx], y[ctx], "gaussian")
    nw = nadaraya_watson(torch.as_tensor(x[qry]), torch.as_tensor(x[ctx]), torch.as_tensor(y[ctx]), "gaussian",
                         h).numpy()
    pred = np.asarray(example["prediction"], dtype=float)
    order = np.argsort(np.argsort(x[is_query]))     # icl_figure draws queries in position order
    return {"maps": sub, "x": x, "y": y, "is_query": is_query, "prediction": pred,
            "nw_prediction": nw[order], "h": h, "x_query": x[qry], "x_context": x[ctx],
            "mse": float(np.mean((pred[qry] - y[qry]) ** 2)), "nw_mse": float(np.mean((nw - y[qry]) ** 2))}


def kv_summary(rows) -> dict:
    """How much slower a token got from the shortest to the longest length, with and without the cache."""
    first, last = rows[0], rows[-1]
    return {"s0": first[0], "s1": last[0], "growth": f"{last[0] / first[0]:.0f}",
            "cache_ratio": f"{last[1] / first[1]:.1f}", "no_cache_ratio": f"{last[2] / first[2]:.1f}"}


def kv_timing_agrees(timing: dict) -> bool:
    """Whether a timing run can be read as the lesson reads it: it settled, and at the longest length a token with
    the cache took less time than one without (what the FLOP counts say it must, bar noise)."""
    last = timing["rows"][-1]
    return bool(timing["stable"] and last[1] < last[2])


def kv_flops_summary(rows) -> dict:
    """What the FLOP caption quotes: from the shortest to the longest S, how many times the attention work per
    token grew with and without the cache, and how many times more work a token takes without it at the longest."""
    first, last = rows[0], rows[-1]
    total = lambda r, k: r[f"{k}_attention"] + r[f"{k}_other"]          # noqa: E731
    return {"s0": first["length"], "s1": last["length"], "growth": f"{last['length'] / first['length']:.0f}",
            "cache_ratio": f"{last['cache_attention'] / first['cache_attention']:.0f}",
            "no_cache_ratio": f"{last['no_cache_attention'] / first['no_cache_attention']:.0f}",
            "saving": f"{total(last, 'no_cache') / total(last, 'cache'):.0f}"}


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


# ------------------------------------------------------------------ predict, then reveal: the right answers
LOO_TIE = 0.02      # an offered bandwidth whose LOO error is within 2 % of the lowest one's counts as right too
SEPARATE = 1.5      # the LOO optimum is offered only when it is at least 1.5x away from every preset


def loo_question(x, y, kernel: str, optimum: float, presets) -> dict:
    """"Which of these bandwidths gives the lowest leave-one-out error?" on (x, y): the presets, plus the LOO
    optimum (2 significant digits) when it is at least ``SEPARATE`` times away from each of them, so that no two
    choices are a hair apart. Returns the bandwidths offered (``h``), their LOO MSE (``scores``), the index of the
    lowest (``best``), every index within ``LOO_TIE`` of it (``right``: a guess of any of them is right), and how
    much higher the best of the other choices is (``margin``, a fraction; inf when every choice ties)."""
    from .regression import loo_cv_scores

    candidates = sorted({float(h) for h in presets})
    rounded = float(f"{optimum:.2g}")
    if all(abs(math.log(rounded / h)) >= math.log(SEPARATE) for h in candidates):
        candidates = sorted([*candidates, rounded])
    scores = loo_cv_scores(x, y, kernel, candidates).numpy()
    best = int(np.nanargmin(scores))
    right = [i for i, s in enumerate(scores) if s <= scores[best] * (1 + LOO_TIE)]
    others = [s for i, s in enumerate(scores) if i not in right]
    margin = float(min(others) / scores[best] - 1) if others else math.inf
    return {"h": candidates, "scores": scores, "best": best, "right": right, "margin": margin}


ROW_SHAPES = ("spike", "band", "flat")


def row_shape(entropy: float, log_n: float, max_weight: float) -> int:
    """What a weight row looks like, as an index into ``ROW_SHAPES``: a spike (one weight above 1/2), nearly flat
    (entropy above 95 % of log N), or a band in between."""
    if max_weight > 0.5:
        return 0
    return 2 if entropy > 0.95 * log_n else 1


def row_sums_answer(row_sums) -> tuple[int, int]:
    """Do the rows still sum to 1? (0: every row, 1: only some, 2: none; how many do), on the rows drawn."""
    whole = np.isclose(np.asarray(row_sums, float), 1.0, atol=1e-6)
    return (0 if whole.all() else 2 if not whole.any() else 1), int(whole.sum())


def rows_lost(row_sums, mask) -> dict:
    """What the row-sum text says of "post": "nothing" (no key is masked), "early" (a causal mask: the first row
    keeps ``first`` of its weight, the last ``last``), or "same" (every row loses the same keys: sums from ``lo``
    to ``hi``)."""
    sums, mask = np.asarray(row_sums, dtype=float), np.asarray(mask, dtype=bool)
    out = {"first": sums[0], "last": sums[-1], "lo": sums.min(), "hi": sums.max()}
    if mask.all():
        return {**out, "kind": "nothing"}
    lost = (~mask).sum(1)
    return {**out, "kind": "early" if lost[0] > lost[-1] else "same"}


LEAK_TOL = 1e-9


def leak_modes(report) -> dict:
    """Which modes the leak probe finds leaking through the key and through the value (display order), and whether
    any query may not see the last position at all (``blind``)."""
    r = report.set_index("mode") if "mode" in report else report
    key = [m for m in r.index if r.loc[m, "leak_key"] > LEAK_TOL]
    value = [m for m in r.index if r.loc[m, "leak_value"] > LEAK_TOL]
    return {"key": key, "value": value}


def gap_size(max_diff: float) -> int:
    """0: equal up to rounding (< 1e-9), 1: close (< 0.05), 2: clearly different."""
    return 0 if max_diff < 1e-9 else 1 if max_diff < 0.05 else 2


def growth_law(d, std) -> int:
    """How std grows with d, as the nearest of (like d, like √d, not at all) to the log-log slope."""
    slope = float(np.polyfit(np.log(np.asarray(d, float)), np.log(np.asarray(std, float)), 1)[0])
    return int(np.argmin([abs(slope - 1.0), abs(slope - 0.5), abs(slope)]))


RARE_SHARE = 0.5     # a measured error below half the theory's: the draws missed the rare values that make it up


def feature_error_summary(err: dict) -> dict:
    """What the random-feature error text and its question say: the factor 4× the features divide the measured
    error by (4^−slope), the orthogonal share and whether orthogonality helps (a share below 0.9), and whether the
    measured iid curve falls short of the exact theory (``rare``: below ``RARE_SHARE`` of it at the largest m)."""
    return {"factor": 4.0 ** -err["slope"], "helps": err["orth_share"] < 0.9,
            "rare": bool(err["iid"][-1] < RARE_SHARE * err["theory"][-1])}
