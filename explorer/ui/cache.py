"""Cached compute for the pages, keyed on plain parameters (never on tensor identity).

Each function turns parameters into numpy results, on the device chosen by ``get_device``.
"""

from __future__ import annotations

import numpy as np
import streamlit as st
import torch

from .. import regression
from ..data import make_dataset, query_grid
from ..device import get_device

LOO_BANDWIDTHS = np.logspace(-2, np.log10(20), 41)


@st.cache_data(max_entries=32, show_spinner=False)
def dataset(name: str, n: int, noise: float, seed: int) -> dict[str, np.ndarray]:
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
            "silverman": regression.silverman_bandwidth(x)}
