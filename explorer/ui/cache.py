"""Cached compute for the pages, keyed on plain parameters (never on tensor identity).

Each function turns parameters into numpy results, on the device chosen by ``get_device``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import streamlit as st
import torch

from .. import attention, learned, masking, regression, scaling
from .. import bridge as bridge_lib
from ..data import make_dataset, query_grid
from ..device import get_device

LOO_BANDWIDTHS = np.logspace(-2, np.log10(20), 41)


@st.cache_data(max_entries=32, show_spinner=False)
def dataset(name: str, n: int, noise: float, seed: int) -> dict[str, np.ndarray | None]:
    """x, y, a 400-point query grid and the true function on it (None for uploaded data).

    ``name`` "upload:<digest>" refers to the validated upload in this session's state; the digest
    is of the file's content and options, so equal keys always mean equal data.
    """
    if name.startswith("upload:"):
        up = st.session_state.get("data.uploaded")
        if up is None or f"upload:{up['sha']}" != name:
            raise ValueError("The uploaded data is no longer available: upload the file again.")
        x, y = up["x"], up["y"]
        return {"x": x, "y": y, "x_grid": np.linspace(x.min(), x.max(), 400), "true": None}
    d = make_dataset(name, n, noise, seed)
    grid = query_grid(d)
    return {"x": d.x, "y": d.y, "x_grid": grid, "true": d.true_fn(grid)}


def _tensors(name, n, noise, seed):
    d = dataset(name, n, noise, seed)
    dev = get_device()
    return (torch.as_tensor(d["x"], device=dev), torch.as_tensor(d["y"], device=dev),
            torch.as_tensor(d["x_grid"], device=dev))


@st.cache_data(max_entries=256, show_spinner=False)
def nw_curve(name: str, n: int, noise: float, seed: int, kernel: str, bandwidth: float) -> np.ndarray:
    x, y, grid = _tensors(name, n, noise, seed)
    return regression.nadaraya_watson(grid, x, y, kernel, bandwidth).cpu().numpy()


@st.cache_data(max_entries=64, show_spinner=False)
def loo_curve(name: str, n: int, noise: float, seed: int, kernel: str) -> dict:
    x, y, _ = _tensors(name, n, noise, seed)
    scores = regression.loo_cv_scores(x, y, kernel, LOO_BANDWIDTHS).cpu().numpy()
    return {"bandwidths": LOO_BANDWIDTHS, "scores": scores,
            "optimum": regression.select_bandwidth(x, y, kernel),
            "silverman": regression.silverman_bandwidth(x, kernel)}


@st.cache_data(max_entries=64, show_spinner=False)
def nw_weight_matrix(name: str, n: int, noise: float, seed: int, kernel: str, bandwidth: float,
                     n_queries: int) -> dict[str, np.ndarray]:
    """NW weights of ``n_queries`` evenly spaced queries, their estimates and row entropies."""
    x, y, _ = _tensors(name, n, noise, seed)
    lo, hi = dataset(name, n, noise, seed)["x_grid"][[0, -1]]
    xq = torch.linspace(float(lo), float(hi), n_queries, dtype=x.dtype, device=x.device)
    w = regression.nw_weights(xq, x, kernel, bandwidth)
    est = regression.nadaraya_watson(xq, x, y, kernel, bandwidth)
    ent = attention.entropy(w)
    ent = torch.where(w.sum(-1) > 0, ent, torch.nan)      # no support: no estimate, no entropy (not "one-hot")
    return {"x_query": xq.cpu().numpy(), "weights": w.cpu().numpy(), "estimate": est.cpu().numpy(),
            "entropy": ent.cpu().numpy()}


@st.cache_data(max_entries=64, show_spinner=False)
def heatmap_regimes(name: str, n: int, noise: float, seed: int, kernel: str, n_queries: int) -> dict:
    """The numbers the heatmap page's notice quotes for the smallest and a large bandwidth."""
    from .. import lessons
    d = dataset(name, n, noise, seed)
    queries = np.linspace(d["x_grid"][0], d["x_grid"][-1], n_queries)     # the page's queries (any h)
    return lessons.heatmap_regimes(d["x"], kernel, queries)


@st.cache_data(max_entries=64, show_spinner=False)
def bridge(d: int, n_keys: int, spread: float, tau: float, seed: int, n_queries: int = 16) -> dict:
    """Everything the "Softmax is a kernel" page shows about random q, k, v."""
    q, k, v = bridge_lib.random_qkv(d, n_queries, n_keys, spread, seed)
    c = bridge_lib.compare(q, k, v, tau)
    return {
        "dot": c["dot"].numpy(), "gauss": c["gauss"].numpy(), "max_diff": c["max_diff"],
        "max_diff_corrected": c["max_diff_corrected"], "key_norms": c["key_norms"].numpy(),
        "tau_sweep": bridge_lib.temperature_sweep(q, k, bridge_lib.log_grid(0.01, 1000, 61)),
        "topk_curve": bridge_lib.topk_error_curve(q, k, v, tau),
    }


@st.cache_data(max_entries=64, show_spinner=False)
def bridge_spread_curve(d: int, n_keys: int, tau: float, seed: int, n_queries: int = 16) -> Any:
    """The dot-vs-Gaussian gap for key-norm spreads 0 to 1 (does not depend on the current spread)."""
    return bridge_lib.difference_vs_spread(d, n_queries, n_keys, tau, np.linspace(0, 1, 21), seed)


@st.cache_data(max_entries=64, show_spinner=False)
def topk_weights(d: int, n_keys: int, spread: float, tau: float, seed: int, k_top: int,
                 n_queries: int = 16) -> np.ndarray:
    q, k, v = bridge_lib.random_qkv(d, n_queries, n_keys, spread, seed)
    return attention.topk_attention(q, k, v, k_top, tau)[1].numpy()


@st.cache_data(max_entries=32, show_spinner=False)
def nw_entropy(name: str, n: int, noise: float, seed: int, kernel: str) -> Any:
    x, _, grid = _tensors(name, n, noise, seed)
    return bridge_lib.nw_entropy_sweep(grid[::4], x, kernel, bridge_lib.log_grid(0.01, 20, 41))


LEARN_MAX_POINTS = 300


def _subsample(x: np.ndarray, y: np.ndarray):
    if len(x) <= LEARN_MAX_POINTS:
        return x, y
    idx = np.linspace(0, len(x) - 1, LEARN_MAX_POINTS).round().astype(int)
    return x[idx], y[idx]


@st.cache_data(max_entries=32, show_spinner=False)   # pages show spin.learn
def learned_bandwidth(name: str, n: int, noise: float, seed: int) -> dict:
    d = dataset(name, n, noise, seed)
    x, y = _subsample(d["x"], d["y"])
    return {"n_used": len(x),
            "loo": learned.learn_bandwidth(x, y, leave_one_out=True),
            "no_loo": learned.learn_bandwidth(x, y, leave_one_out=False),
            "optimum": regression.select_bandwidth(x, y, "gaussian")}


@st.cache_data(max_entries=32, show_spinner=False)   # pages show spin.param
def parametric_fit(name: str, n: int, noise: float, seed: int, hidden: int, nw_form: bool = True) -> dict:
    d = dataset(name, n, noise, seed)
    x, y = _subsample(d["x"], d["y"])
    model, losses = learned.fit_parametric_attention(x, y, hidden=hidden, seed=seed, nw_form=nw_form)
    xt, yt = torch.as_tensor(x), torch.as_tensor(y)
    grid = torch.as_tensor(d["x_grid"])
    with torch.no_grad():
        pred, w = model(grid, xt, yt)
    h_opt = regression.select_bandwidth(x, y, "gaussian")
    return {"x": x, "losses": losses, "pred": pred.numpy(), "weights": w.numpy(),
            "gauss_weights": regression.nw_weights(grid, xt, "gaussian", h_opt).numpy(),
            "nw_pred": regression.nadaraya_watson(grid, xt, yt, "gaussian", h_opt).numpy(), "h_opt": h_opt}


@st.cache_data(max_entries=64, show_spinner=False)
def masking_example(length: int, d: int, kind: str, valid: int, seed: int) -> dict:
    q, k, v = masking.example(length, d, seed)
    mask = masking.make_mask(kind, length, valid)
    res = masking.all_modes(q, k, v, mask)
    return {"mask": mask.numpy(), "report": masking.report(q, k, v, mask),
            **{f"{m}.{name}": t.numpy() for m, r in res.items() for name, t in r.items()},
            "grads": {m: g.numpy() for m, g in masking.gradients(q, k, v, mask).items()}}


@st.cache_data(max_entries=16, show_spinner=False)
def scaling_tables(n: int, seed: int) -> dict:
    ds = [2 ** i for i in range(11)]
    return {"unscaled": scaling.logit_stats(ds, n, scaled=False, seed=seed),
            "scaled": scaling.logit_stats(ds, n, scaled=True, seed=seed),
            "regime": scaling.regime_vs_scale(np.logspace(-1, 2, 61), n, seed)}


@st.cache_data(max_entries=64, show_spinner=False)
def scaling_key_norms(d: int, seed: int, n: int = 256) -> tuple[float, float]:
    """Smallest and largest norm among the n keys with iid N(0, 1) entries that the page's tables use."""
    return scaling.key_norm_range(d, n, seed)


@st.cache_data(max_entries=64, show_spinner=False)
def scaling_samples(d: int, seed: int) -> dict:
    return {"unscaled": scaling.logit_samples(d, 64, False, seed).numpy(),
            "scaled": scaling.logit_samples(d, 64, True, seed).numpy()}


@st.cache_data(max_entries=4, show_spinner=False)   # pages show spin.kv
def kv_timing(lengths: tuple[int, ...], seed: int = 0) -> list:
    from ..training.model import cache_timing

    return cache_timing(list(lengths), seed=seed)
