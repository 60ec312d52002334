"""The lesson figures, each defined once: parameters → data → figure.

A page draws a figure with ``explorer.ui.figure.lesson(name, **parameters)`` (which caches the data) and the
headless lecture export (``explorer-export``) draws the same entries at each page's default parameters, so
an exported figure is the figure the page shows. ``compute`` is pure (numbers in, a dict of numpy/pandas out,
no streamlit) and returns everything the page's text quotes about the figure as well; ``draw`` turns that
dict into a plotly figure in a language.

>>> data = FIGURES["logit_histogram"].compute(d=16, seed=0)
>>> fig = FIGURES["logit_histogram"].draw(data, "en")
>>> [trace.type for trace in fig.data]
['histogram', 'histogram']
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..i18n import t
from . import common
from . import masking as mfig
from . import regression as rfig
from . import scaling as sfig
from . import training as tfig
from .style import NORMAL, PALETTE, mark_answer

LOO_BANDWIDTHS = np.logspace(-2, np.log10(20), 41)


@dataclass(frozen=True)
class LessonFigure:
    name: str                                    # file name in the export, key on the page
    page: str                                    # the page that shows it
    compute: Callable[..., dict]                 # parameters -> data
    draw: Callable[[dict, str], Any]             # (data, language) -> figure
    marks: tuple[str, ...] = ()                  # parameters only the drawing reads (a marker at the current
                                                 # value): they change the picture, not the data

    def figure(self, lang: str = "en", **parameters):
        marks = {k: parameters.pop(k) for k in self.marks if k in parameters}
        return self.draw({**self.compute(**parameters), **marks}, lang)


FIGURES: dict[str, LessonFigure] = {}
COMPUTES: dict[str, Callable[..., dict]] = {}     # compute function by name: figures may share one


def lesson_figure(name: str, page: str, compute: Callable[..., dict], marks: tuple[str, ...] = ()):
    """Register ``draw`` (the decorated function) with its ``compute`` as the figure ``name``."""
    def register(draw: Callable[[dict, str], Any]):
        FIGURES[name] = LessonFigure(name, page, compute, draw, marks)
        COMPUTES[compute.__qualname__] = compute
        return draw
    return register


def dataset_label(name: str, lang: str) -> str:
    return t("data.your_data", lang) if name.startswith("upload") else t(f"dataset.{name}", lang)


# --------------------------------------------------------------------------- Kernel regression
def _shapes(kernels: tuple[str, ...]) -> dict:
    return {"kernels": list(kernels)}


@lesson_figure("kernel_shapes", "kernel_regression", _shapes)
def _draw_shapes(d: dict, lang: str):
    return rfig.kernel_shapes_figure(d["kernels"], lang=lang)


def _fit(data: Mapping, dataset: str, kernels: tuple[str, ...], bandwidths: tuple[float, ...],
         same_width: bool) -> dict:
    """The first (chosen) kernel at every bandwidth, each compared kernel at the first bandwidth only (at most
    3 + 5 curves, one colour each); compared kernels at the first kernel's effective width when asked."""
    from ..kernels import equivalent_bandwidth
    from ..regression import defined_mse, nadaraya_watson

    curves = []
    for i, k in enumerate(kernels):
        for b in bandwidths if i == 0 else bandwidths[:1]:
            hk = equivalent_bandwidth(b, k, reference=kernels[0]) if same_width else b
            est = nadaraya_watson(data["x_grid"], data["x"], data["y"], k, hk).numpy()
            mse = defined_mse(est, data["true"])[0] if data["true"] is not None else None
            curves.append({"kernel": k, "h": hk, "estimate": est, "mse": mse,
                           "undefined": int(np.isnan(est).sum())})
    return {**data, "dataset": dataset, "curves": curves}


def upload_axes(data: Mapping, lang: str) -> tuple[str, str] | None:
    """An upload's axis titles: its column names (and "standardised" when the values were), else None."""
    if "columns" not in data:
        return None
    suffix = t("fig.standardised", lang) if data["standardised"] else ""
    return tuple(f"{name}{suffix}" for name in data["columns"])


def curve_label(curve: Mapping, lang: str) -> str:
    return t("fig.curve_label", lang, kernel=t(f"kernel.{curve['kernel']}", lang), h=f"{curve['h']:.3g}")


@lesson_figure("fit", "kernel_regression", _fit)
def _draw_fit(d: dict, lang: str):
    return rfig.fit_figure(d["x"], d["y"], d["x_grid"], d["true"], {curve_label(c, lang): c["estimate"]
                                                                  for c in d["curves"]},
                           title=t("kr.fit_title", lang, dataset=dataset_label(d["dataset"], lang)), lang=lang,
                           axes=upload_axes(d, lang))


def _loo(data: Mapping, kernels: tuple[str, ...], same_width: bool) -> dict:
    """Leave-one-out MSE against h for each kernel; with equal width, each drawn at the first kernel's h."""
    from ..kernels import equivalent_bandwidth
    from ..regression import loo_cv_scores, select_bandwidth, silverman_bandwidth

    scores = {k: loo_cv_scores(data["x"], data["y"], k, LOO_BANDWIDTHS).numpy() for k in kernels}
    x_of = {k: LOO_BANDWIDTHS / (equivalent_bandwidth(1.0, k, reference=kernels[0]) if same_width else 1)
            for k in kernels}
    return {"bandwidths": LOO_BANDWIDTHS, "scores": scores, "x_of": x_of,
            "shift": same_width and len(kernels) > 1,
            "optimum": select_bandwidth(data["x"], data["y"], kernels[0]),
            "silverman": silverman_bandwidth(data["x"], kernels[0])}


@lesson_figure("loo_cv", "kernel_regression", _loo, marks=("current", "answer"))
def _draw_loo(d: dict, lang: str):
    name = {k: t(f"kernel.{k}", lang) for k in d["scores"]}
    return rfig.loo_cv_figure(d["bandwidths"], {name[k]: s for k, s in d["scores"].items()}, current=d["current"],
                              optimum=d["optimum"], silverman=d["silverman"], lang=lang,
                              x_by_series={name[k]: x for k, x in d["x_of"].items()} if d["shift"] else None,
                              answer=d.get("answer"))


# --------------------------------------------------------------------------- Attention heatmap
def _weights(data: Mapping, kernel: str, h: float, n_queries: int) -> dict:
    """NW weights of ``n_queries`` evenly spaced queries, their estimates and row entropies."""
    import torch

    from ..attention import entropy
    from ..regression import nadaraya_watson, nw_weights

    x = torch.as_tensor(data["x"])
    xq = torch.linspace(float(data["x_grid"][0]), float(data["x_grid"][-1]), n_queries, dtype=x.dtype)
    w = nw_weights(xq, x, kernel, h)
    ent = torch.where(w.sum(-1) > 0, entropy(w), torch.nan)    # no support: no estimate, no entropy
    return {"x_query": xq.numpy(), "x_key": data["x"], "weights": w.numpy(), "kernel": kernel, "h": h,
            "estimate": nadaraya_watson(xq, x, torch.as_tensor(data["y"]), kernel, h).numpy(),
            "entropy": ent.numpy()}


@lesson_figure("weights_heatmap", "attention_heatmap", _weights)
def _draw_weights(d: dict, lang: str):
    z, rows, cols, _ = common.downsample(d["weights"], d["x_query"], d["x_key"])
    title = t("ah.heat_title", lang, kernel=t(f"kernel.{d['kernel']}", lang), h=f"{d['h']:g}")
    return common.heatmap(z, np.round(cols, 3), np.round(rows, 3), title, t("ah.key_axis", lang),
                          t("ah.query_axis", lang), height=520, colorbar_title=t("fig.weight", lang), lang=lang)


def _sweep(data: Mapping, kernel: str, bandwidths: tuple[float, ...], n_queries: int) -> dict:
    return {"kernel": kernel, "panels": [_weights(data, kernel, b, n_queries) for b in sorted(bandwidths)]}


@lesson_figure("sigma_sweep", "attention_heatmap", _sweep, marks=("answer",))
def _draw_sweep(d: dict, lang: str):
    """``answer`` (h, text): the panel at that h is the one the page's question asked about; its title says so."""
    panels = d["panels"]
    mats = [common.downsample(p["weights"], p["x_query"], p["x_key"], common.MAX_DISPLAY_CELLS // len(panels))
            for p in panels]
    _, rows, cols, _ = mats[0]
    answer = d.get("answer")
    titles = [f"h = {p['h']:g}" + (f"<br><b>{answer[1]}</b>" if answer and p["h"] == answer[0] else "")
              for p in panels]
    return common.heatmap_grid([m[0] for m in mats], titles, np.round(cols, 2),
                               np.round(rows, 2), t("ah.sweep_title", lang, kernel=t(f"kernel.{d['kernel']}", lang)),
                               t("ah.key_short", lang), t("ah.query_short", lang), cols=min(4, len(mats)),
                               colorbar_title=t("fig.weight", lang), lang=lang)


# --------------------------------------------------------------------------- Softmax is a kernel
def _bridge(d: int, n_keys: int, spread: float, tau: float, seed: int, n_queries: int = 16) -> dict:
    """Dot-product and Gaussian-kernel attention on the same random q, k, v, and what the page says of them."""
    from .. import bridge

    q, k, v = bridge.random_qkv(d, n_queries, n_keys, spread, seed)
    c = bridge.compare(q, k, v, tau)
    return {"dot": c["dot"].numpy(), "gauss": c["gauss"].numpy(), "max_diff": c["max_diff"],
            "max_diff_corrected": c["max_diff_corrected"], "key_norms": c["key_norms"].numpy(), "tau": tau,
            "tau_sweep": bridge.temperature_sweep(q, k, bridge.log_grid(0.01, 1000, 61)),
            "topk_curve": bridge.topk_error_curve(q, k, v, tau)}


@lesson_figure("softmax_vs_kernel", "softmax_kernel", _bridge, marks=("answer",))
def _draw_bridge(r: dict, lang: str):
    """``answer``: a label pointing at the cell where the two panels differ most (the question's answer)."""
    tau = r["tau"]
    fig = common.heatmap_grid([r["dot"], r["gauss"]], [t("sk.dot_title", lang, tau=f"{tau:.3g}"),
                                                       t("sk.gauss_title", lang, sigma=f"{np.sqrt(tau):.3g}")],
                              None, None, t("sk.side_title", lang), t("sk.key_j", lang), t("sk.query_i", lang),
                              cols=2, height=380, colorbar_title=t("fig.weight", lang), lang=lang)
    if r.get("answer"):
        row, col = np.unravel_index(np.argmax(np.abs(r["dot"] - r["gauss"])), r["dot"].shape)
        mark_answer(fig, int(col), int(row), r["answer"], axes=("x2", "y2"), above=row > r["dot"].shape[0] / 3)
    return fig


LEARN_MAX_POINTS = 300          # gradient descent on h and the attention layer see at most this many points


def _subsample(x: np.ndarray, y: np.ndarray):
    if len(x) <= LEARN_MAX_POINTS:
        return x, y
    idx = np.linspace(0, len(x) - 1, LEARN_MAX_POINTS).round().astype(int)
    return x[idx], y[idx]


def _learned(data: Mapping) -> dict:
    """The bandwidth learned by gradient descent on the NW loss, with and without leave-one-out."""
    from ..learned import learn_bandwidth
    from ..regression import select_bandwidth

    x, y = _subsample(data["x"], data["y"])
    return {"n_used": len(x), "loo": learn_bandwidth(x, y, leave_one_out=True),
            "no_loo": learn_bandwidth(x, y, leave_one_out=False), "optimum": select_bandwidth(x, y, "gaussian")}


@lesson_figure("learned_h", "softmax_kernel", _learned)
def _draw_learned_h(lb: dict, lang: str):
    loo, no_loo = lb["loo"], lb["no_loo"]
    return common.lines(loo["step"], {t("sk.loo", lang): loo["h"], t("sk.sees_itself", lang): no_loo["h"]},
                        t("sk.h_gd_title", lang), t("sk.adam_step", lang), t("sk.h_axis", lang), log_y=True,
                        hlines=[(lb["optimum"], t("sk.grid_optimum", lang, h=f"{lb['optimum']:.3g}"))], height=360)


@lesson_figure("learned_loss", "softmax_kernel", _learned)
def _draw_learned_loss(lb: dict, lang: str):
    loo, no_loo = lb["loo"], lb["no_loo"]
    return common.lines(loo["step"], {t("sk.loo", lang): loo["loss"], t("sk.sees_itself", lang): no_loo["loss"]},
                        t("sk.train_loss", lang), t("sk.adam_step", lang), t("sk.mse_axis", lang), log_y=True,
                        height=360)


def _parametric(data: Mapping, hidden: int, nw_form: bool, seed: int) -> dict:
    """A trained attention layer (q, k of ``hidden`` units) against NW with the LOO-optimal Gaussian h."""
    import torch

    from ..learned import fit_parametric_attention
    from ..lessons import param_picks
    from ..regression import nadaraya_watson, nw_weights, select_bandwidth

    x, y = _subsample(data["x"], data["y"])
    model, losses = fit_parametric_attention(x, y, hidden=hidden, seed=seed, nw_form=nw_form)
    xt, yt, grid = torch.as_tensor(x), torch.as_tensor(y), torch.as_tensor(data["x_grid"])
    with torch.no_grad():
        pred, w = model(grid, xt, yt)
    h_opt = select_bandwidth(x, y, "gaussian")
    return {**data, "x_used": x, "losses": losses, "pred": pred.numpy(), "weights": w.numpy(), "h_opt": h_opt,
            "gauss_weights": nw_weights(grid, xt, "gaussian", h_opt).numpy(), "picks": param_picks(len(grid)),
            "nw_pred": nadaraya_watson(grid, xt, yt, "gaussian", h_opt).numpy()}


@lesson_figure("param_rows", "softmax_kernel", _parametric)
def _draw_param_rows(pf: dict, lang: str):
    picks = pf["picks"]
    return common.heatmap_grid([pf["weights"][picks], pf["gauss_weights"][picks]],
                               [t("sk.learned_layer", lang), t("sk.gauss_h", lang, h=f"{pf['h_opt']:.3g}")],
                               np.round(pf["x_used"], 2), [f"x = {pf['x_grid'][i]:.2f}" for i in picks],
                               t("sk.rows_title", lang), t("ah.key_short", lang), t("sk.query", lang), cols=2,
                               height=300, colorbar_title=t("fig.weight", lang), lang=lang)


@lesson_figure("param_fit", "softmax_kernel", _parametric)
def _draw_param_fit(pf: dict, lang: str):
    return rfig.fit_figure(pf["x"], pf["y"], pf["x_grid"], pf["true"],
                           {t("sk.learned_layer", lang): pf["pred"],
                            t("sk.nw_gauss", lang, h=f"{pf['h_opt']:.3g}"): pf["nw_pred"]},
                           title=t("sk.fits", lang), lang=lang)


# --------------------------------------------------------------------------- Masking
def _masking(length: int, d: int, kind: str, valid: int, seed: int, wrong: str) -> dict:
    """Every masking mode on one random example: weights, row sums, norms, gradients and the report."""
    from .. import masking

    q, k, v = masking.example(length, d, seed)
    mask = masking.make_mask(kind, length, valid)
    res = masking.all_modes(q, k, v, mask)
    return {"mask": mask.numpy(), "wrong": wrong, "report": masking.report(q, k, v, mask),
            **{f"{m}.{name}": x.numpy() for m, r in res.items() for name, x in r.items()},
            "grads": {m: g.numpy() for m, g in masking.gradients(q, k, v, mask).items()}}


@lesson_figure("masking", "masking", _masking)
def _draw_masking(ex: dict, lang: str):
    wrong = ex["wrong"]
    return mfig.masked_pair(ex["pre.weights"], ex[f"{wrong}.weights"], ex["mask"],
                            (t("mk.pre_correct", lang), t(f"modename.{wrong}", lang)), lang=lang)


# --------------------------------------------------------------------------- Scaling
D_RANGE = tuple(2 ** i for i in range(11))


def _scaling(n: int, seed: int) -> dict:
    from .. import scaling

    return {"n": n, "unscaled": scaling.logit_stats(list(D_RANGE), n, scaled=False, seed=seed),
            "scaled": scaling.logit_stats(list(D_RANGE), n, scaled=True, seed=seed),
            "regime": scaling.regime_vs_scale(np.logspace(-1, 2, 61), n, seed)}


@lesson_figure("logit_std", "scaling", _scaling, marks=("d", "answer"))
def _draw_std(r: dict, lang: str):
    ds, d = r["unscaled"]["d"].to_numpy(), r["d"]
    unscaled, scaled = t("fig.unscaled", lang), t("fig.scaled", lang)
    sqrt_d, one = t("sc.theory_sqrt", lang), t("sc.theory_one", lang)
    fig = common.lines(ds, {unscaled: r["unscaled"]["logit_std"], scaled: r["scaled"]["logit_std"],
                            sqrt_d: np.sqrt(ds), one: np.ones_like(ds, dtype=float)},
                       t("sc.std_title", lang), t("sc.d_axis", lang), t("sc.std_axis", lang), log_x=True, log_y=True,
                       mode="lines+markers", dashes={sqrt_d: "dot", one: "dot"}, colors={sqrt_d: "#222", one: "#777"},
                       vlines=[(d, f"d = {d}")])
    if r.get("answer"):                   # the unscaled curve, where its growth reads best: half way up
        i = len(ds) // 2
        mark_answer(fig, float(ds[i]), float(r["unscaled"]["logit_std"].iloc[i]), r["answer"])
    return fig


def _samples(d: int, seed: int) -> dict:
    from .. import scaling

    return {"d": d, "unscaled": scaling.logit_samples(d, 64, False, seed).numpy(),
            "scaled": scaling.logit_samples(d, 64, True, seed).numpy()}


@lesson_figure("logit_histogram", "scaling", _samples)
def _draw_samples(s: dict, lang: str):
    return sfig.logit_histogram(s["unscaled"], s["scaled"], s["d"], lang=lang)


# --------------------------------------------------------------------------- Live training
def _training(trainer) -> dict:
    """What the live figures read from a trainer, taken under its lock (another run may be mid-step)."""
    with trainer.lock:
        rows, maps = list(trainer.history), [m.numpy() for m in trainer.attention_maps()]
        steps = trainer.step_count
    return {"rows": rows, "maps": maps, "step_count": steps, "n_layers": trainer.config.n_layers,
            "n_heads": trainer.config.n_heads, "ceiling": trainer.task.entropy_ceiling(),
            "block": trainer.task.map_block(trainer.example)}


@lesson_figure("training_entropy", "live_training", _training)
def _draw_entropy(r: dict, lang: str):
    import pandas as pd

    return tfig.entropy_figure(pd.DataFrame(r["rows"]), r["n_layers"], r["n_heads"], r["ceiling"], lang=lang)


@lesson_figure("training_head_maps", "live_training", _training)
def _draw_maps(r: dict, lang: str):
    return tfig.attention_maps_figure(r["maps"], lang=lang, block=r.get("block"))


# --------------------------------------------------------------------------- Efficient attention
EMBED_D = 16                          # the 1-D inputs, placed along one axis of R^16 for the random features
FEATURE_COUNTS = (8, 16, 32, 64, 128, 256, 512, 1024)


def _rf_weights(x_query: np.ndarray, x_keys: np.ndarray, h: float, m: int, kind: str, orthogonal: bool,
                seed: int) -> np.ndarray:
    """NW weights of the Gaussian kernel estimated with random features: φ(q)·ψ(k_i), rows normalised, where
    q = x/h, k_i = x_i/h (on one axis of R^16) and ψ(k) = φ(k) exp(-|k|²/2), so that
    E[φ(q)·ψ(k)] = exp(q·k - |k|²/2) = exp(-(x - x_i)²/(2h²)) times a factor of the query alone."""
    import torch

    from ..efficient import random_feature_map

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
    import torch

    from ..efficient import linear_attention
    from ..regression import nw_weights

    grid, x, y = data["x_grid"], data["x"], data["y"]
    exact_w = nw_weights(grid, x, "gaussian", h).numpy()
    rf_w = _rf_weights(grid, x, h, m, kind, orthogonal, seed)
    xs = torch.as_tensor(x)[:, None] / h
    elu = linear_attention(torch.as_tensor(grid)[:, None] / h, xs, torch.as_tensor(y)[:, None]).numpy()[:, 0]
    exact, rf = exact_w @ y, rf_w @ y
    return {**data, "h": h, "m": m, "kind": kind, "exact": exact, "rf": rf, "elu": elu,
            "weight_error": float(np.nanmean(np.abs(rf_w - exact_w).sum(1))),
            "fit_error": float(np.sqrt(np.nanmean((rf - exact) ** 2))), "elu_spread": float(elu.max() - elu.min())}


@lesson_figure("efficient_zoo", "efficient_attention", _zoo)
def _draw_zoo(z: dict, lang: str):
    return rfig.fit_figure(z["x"], z["y"], z["x_grid"], z["true"],
                           {t("ef.exact", lang, h=f"{z['h']:g}"): z["exact"],
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
    from ..efficient import kernel_estimate_error

    x = np.asarray(data["x"])
    keys = x[np.linspace(0, len(x) - 1, ERROR_KEYS).round().astype(int)] if len(x) > ERROR_KEYS else x
    queries = np.asarray(data["x_grid"])[::8]
    iid, orth = (kernel_estimate_error(queries, keys, h, kind, o, seed, FEATURE_COUNTS, ERROR_DRAWS)
                 for o in (False, True))
    m = iid["m"]
    tail = m >= 64
    slope = float(np.polyfit(np.log(m[tail]), np.log(iid["rms"][tail]), 1)[0])
    return {"m": m, "kind": kind, "iid": iid["rms"], "orthogonal": orth["rms"], "theory": iid["theory"],
            "slope": slope, "orth_share": float(np.mean(orth["rms"] / iid["rms"])), "draws": ERROR_DRAWS,
            "n_keys": len(keys), "reach": float(np.abs(x).max() / h)}


@lesson_figure("efficient_error", "efficient_attention", _rf_error, marks=("answer",))
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
    import torch

    from ..efficient import online_softmax
    from ..regression import nadaraya_watson

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


@lesson_figure("online_logits", "efficient_attention", _online_row, marks=("step",))
def _draw_online_logits(r: dict, lang: str):
    from .style import figure, line_trace

    step = min(r.get("step", len(r["stops"])), len(r["stops"]))
    seen = np.arange(len(r["x"])) < r["stops"][step - 1]
    traces = [{"type": "scatter", "x": r["x"][~seen], "y": r["logits"][~seen], "mode": "markers",
               "name": t("ef.unseen", lang), "marker": {"color": "#bbbbbb", "size": 5}},
              {"type": "scatter", "x": r["x"][seen], "y": r["logits"][seen], "mode": "markers",
               "name": t("ef.seen", lang, k=step), "marker": {"color": PALETTE[0], "size": 6}},
              line_trace([r["x"].min(), r["x"].max()], [r["max"][step - 1]] * 2, t("ef.running_max", lang),
                         PALETTE[1], NORMAL, dash="dash")]
    return figure(traces, t("ef.online_title", lang, x0=f"{r['x0']:.2f}"), t("ef.key_x", lang),
                  t("ef.logit_axis", lang), NORMAL, 380)


@lesson_figure("online_running", "efficient_attention", _online_row, marks=("step",))
def _draw_online_running(r: dict, lang: str):
    blocks = np.arange(1, len(r["stops"]) + 1)
    step = min(r.get("step", len(blocks)), len(blocks))
    return common.lines(blocks, {t("ef.partial_estimate", lang): r["estimate"]}, t("ef.running_title", lang),
                        t("ef.block_axis", lang), t("ef.estimate_axis", lang), mode="lines+markers",
                        hlines=[(r["exact"], t("ef.exact_estimate", lang, value=f"{r['exact']:.4f}"))],
                        vlines=[(step, t("ef.step_mark", lang))], height=380)


def _rnn(length: int, d: int, seed: int) -> dict:
    """Causal linear attention (elu+1) on random q, k, v run as an RNN, and the masked parallel form."""
    import torch

    from ..efficient import linear_attention_masked, linear_attention_states

    g = torch.Generator().manual_seed(seed)
    q, k, v = (torch.randn(length, d, generator=g, dtype=torch.float64) for _ in range(3))
    states = linear_attention_states(q, k, v)
    parallel = linear_attention_masked(q, k, v, torch.ones(length, length, dtype=torch.bool).tril())
    rnn = torch.stack([s["output"] for s in states])
    return {"states": np.stack([s["state"].numpy() for s in states]), "rnn": rnn.numpy(),
            "parallel": parallel.numpy(), "max_diff": float((rnn - parallel).abs().max()), "d": d}


@lesson_figure("rnn_state", "efficient_attention", _rnn, marks=("t",))
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


def _cost(d: int, lengths: tuple[int, ...] = COST_LENGTHS, block: int = 1024, seed: int = 0) -> dict:
    """Time (best of 3) of dense softmax attention (the N × N weights built), the online softmax (key blocks)
    and linear attention (elu+1), on this machine at float32; and the bytes each one's largest intermediates
    take, counted from their shapes."""
    import time

    import torch

    from ..efficient import linear_attention, online_softmax_attention

    def best(fn):
        out = []
        for _ in range(3 if n <= 2048 else 1):            # the long runs are long enough to time once
            t0 = time.perf_counter()
            fn()
            out.append(time.perf_counter() - t0)
        return min(out)

    rows = {"n": [], "dense": [], "online": [], "linear": [], "dense_bytes": [], "online_bytes": [],
            "linear_bytes": []}
    g = torch.Generator().manual_seed(seed)
    for n in lengths:
        q, k, v = (torch.randn(n, d, generator=g) for _ in range(3))
        rows["n"].append(n)
        rows["dense"].append(best(lambda q=q, k=k, v=v: torch.softmax(q @ k.T / d ** 0.5, -1) @ v)
                             if n <= DENSE_MAX else np.nan)
        rows["online"].append(best(lambda q=q, k=k, v=v: online_softmax_attention(q, k, v, block, record=False)))
        rows["linear"].append(best(lambda q=q, k=k, v=v: linear_attention(q, k, v)))
        rows["dense_bytes"].append(2 * n * n * 4)                       # logits and weights, N × N each
        rows["online_bytes"].append(2 * n * min(block, n) * 4 + n * (d + 2) * 4)   # one block, running sums
        rows["linear_bytes"].append(2 * n * d * 4 + d * d * 4)          # φ(Q), φ(K) and the d × d state
    return {k: np.array(v, dtype=float) for k, v in rows.items()} | {"d": d, "block": block}


@lesson_figure("attention_cost", "efficient_attention", _cost)
def _draw_cost(c: dict, lang: str):
    from ..lessons import crossover

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


@lesson_figure("attention_memory", "efficient_attention", _cost)
def _draw_memory(c: dict, lang: str):
    mib = 1 / 2 ** 20
    return common.lines(c["n"], {t("ef.dense", lang): c["dense_bytes"] * mib, t("ef.online", lang):
                                 c["online_bytes"] * mib, t("ef.linear", lang): c["linear_bytes"] * mib},
                        t("ef.memory_title", lang), t("ef.n_axis", lang), t("ef.mib_axis", lang), log_x=True,
                        log_y=True, mode="lines+markers")
