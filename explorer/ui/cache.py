"""Cached compute for the pages, keyed on plain parameters (never on tensor identity).

Each function turns parameters into numpy results, on the device chosen by ``get_device``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import streamlit as st
import torch

from .. import attention, regression, scaling
from .. import bridge as bridge_lib
from ..data import dataset_arrays
from ..device import get_device


def lesson_data(name: str, **parameters) -> dict:
    """The data of the lesson figure ``name`` (``explorer.figures.registry``) at ``parameters``, cached per
    compute function: figures that share one (the two learned-bandwidth plots) compute it once."""
    from ..figures.registry import FIGURES

    return _computed(FIGURES[name].compute.__qualname__, **parameters)


@st.cache_data(max_entries=128, show_spinner=False)
def _computed(compute: str, **parameters) -> dict:
    from ..figures.registry import COMPUTES

    return COMPUTES[compute](**parameters)


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
        return {"x": x, "y": y, "x_grid": np.linspace(x.min(), x.max(), 400), "true": None,
                "columns": up["columns"], "standardised": up["standardised"]}
    return dataset_arrays(name, n, noise, seed)


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
def loo_optimum(name: str, n: int, noise: float, seed: int, kernel: str) -> float:
    """The leave-one-out optimal bandwidth of ``kernel`` on the dataset (the curve is the registry's loo_cv)."""
    x, y, _ = _tensors(name, n, noise, seed)
    return regression.select_bandwidth(x, y, kernel)


@st.cache_data(max_entries=64, show_spinner=False)
def loo_question(name: str, n: int, noise: float, seed: int, kernel: str, optimum: float,
                 presets: tuple[float, ...]) -> dict:
    """The Kernel regression page's question (``lessons.loo_question``), computed once per dataset and kernel, not
    on every rerun."""
    from .. import lessons
    d = dataset(name, n, noise, seed)
    return lessons.loo_question(d["x"], d["y"], kernel, optimum, presets)


@st.cache_data(max_entries=64, show_spinner=False)
def heatmap_regimes(name: str, n: int, noise: float, seed: int, kernel: str, n_queries: int) -> dict:
    """The numbers the heatmap page's notice quotes for the smallest and a large bandwidth."""
    from .. import lessons
    d = dataset(name, n, noise, seed)
    queries = np.linspace(d["x_grid"][0], d["x_grid"][-1], n_queries)     # the page's queries (any h)
    return lessons.heatmap_regimes(d["x"], kernel, queries)


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


@st.cache_data(max_entries=64, show_spinner=False)
def scaling_key_norms(d: int, seed: int, n: int = 256) -> tuple[float, float]:
    """Smallest and largest norm among the n keys with iid N(0, 1) entries that the page's tables use."""
    return scaling.key_norm_range(d, n, seed)


@st.cache_data(max_entries=4, show_spinner=False)
def kv_flops(lengths: tuple[int, ...]) -> list[dict]:
    """FLOPs per generated token with and without the KV cache: counted, the same on every machine, so shared."""
    from ..training.timing import generation_flops

    return generation_flops(list(lengths))


@st.cache_resource(max_entries=4, show_spinner=False)   # the page shows spin.cost; shared by all sessions
def attention_cost(d: int) -> dict:
    """The measured cost rows of the Efficient attention page (``registry._cost``), timed once per server."""
    from ..figures.registry import COMPUTES

    return COMPUTES["_cost"](d)
