"""Cached compute for the pages, keyed on plain parameters (never on tensor identity).

Each function turns parameters into numpy results, on the device chosen by ``get_device``. The results are kept
under the server's byte budget (``explorer.ui.memory``), shared by every session and read-only.
"""

from __future__ import annotations

import importlib

import numpy as np
import streamlit as st
import torch

from .. import bandwidth, regression
from ..data import dataset_arrays
from ..device import get_device
from ..lessons import attention_heatmap, efficient_attention, kernel_regression, shared
from ..lessons.base import Spec
from ..offline import lesson_html, with_plotly_inside
from .memory import memo


def spec_data(spec: Spec) -> dict:
    """The data of a lesson figure's ``Spec`` (``<lesson>.figures(values)[name]``), cached per compute function
    (figures that share one, the two learned-bandwidth plots, compute it once), unless the figure reads live
    state (a model being trained)."""
    compute = spec.figure_def.compute
    if not spec.figure_def.cached:
        return compute(**spec.inputs)
    return _computed(compute.__module__, compute.__qualname__, **spec.inputs)


@memo(128)
def _computed(module: str, compute: str, **inputs) -> dict:
    return getattr(importlib.import_module(module), compute)(**inputs)


@memo(32)
def dataset(name: str, n: int, noise: float, seed: int) -> dict[str, np.ndarray | None]:
    """x, y, a 400-point query grid, the true function on it (None for uploaded data) and the dataset's name
    ("upload" for an upload: a refused upload leaves the previous dataset, and the figures name what they show).

    ``name`` "upload:<digest>" refers to the validated upload in this session's state; the digest
    is of the file's content and options, so equal keys always mean equal data.
    """
    if name.startswith("upload:"):
        up = st.session_state.get("data.uploaded")
        if up is None or f"upload:{up['sha']}" != name:
            raise ValueError("The uploaded data is no longer available: upload the file again.")
        x, y = up["x"], up["y"]
        return {"x": x, "y": y, "x_grid": np.linspace(x.min(), x.max(), 400), "true": None,
                "columns": up["columns"], "standardised": up["standardised"], "dataset": "upload"}
    return {**dataset_arrays(name, n, noise, seed), "dataset": name}


def _tensors(name, n, noise, seed):
    d = dataset(name, n, noise, seed)
    dev = get_device()
    return (torch.as_tensor(d["x"], device=dev), torch.as_tensor(d["y"], device=dev),
            torch.as_tensor(d["x_grid"], device=dev))


@memo(256)
def nw_curve(name: str, n: int, noise: float, seed: int, kernel: str, bandwidth: float) -> np.ndarray:
    x, y, grid = _tensors(name, n, noise, seed)
    return regression.nadaraya_watson(grid, x, y, kernel, bandwidth).cpu().numpy()


@memo(64)
def presets_caption(name: str, n: int, noise: float, seed: int, kernel: str):
    """The caption of the bandwidth's presets (``shared.presets_caption``) on the dataset, once per dataset and
    kernel."""
    return shared.presets_caption(name, kernel, dataset(name, n, noise, seed))


@memo(64)
def preset_errors(name: str, n: int, noise: float, seed: int, kernel: str) -> dict[float, float] | None:
    """Each preset's error against the true function (Kernel regression's notice); None for an upload."""
    d = dataset(name, n, noise, seed)
    if d["true"] is None:
        return None
    return kernel_regression.preset_errors(d, kernel, shared.presets(name).values())


@memo(64)
def loo_optimum(name: str, n: int, noise: float, seed: int, kernel: str) -> float:
    """The leave-one-out optimal bandwidth of ``kernel`` on the dataset (the curve is the registry's loo_cv)."""
    x, y, _ = _tensors(name, n, noise, seed)
    return bandwidth.select_bandwidth(x, y, kernel)


@memo(64)
def loo_flat(name: str, n: int, noise: float, seed: int, kernel: str) -> float | None:
    """Where ``kernel``'s leave-one-out curve is flat up to its optimum (``bandwidth.flat_below``), or None."""
    x, y, _ = _tensors(name, n, noise, seed)
    return bandwidth.flat_below(x, y, kernel, loo_optimum(name, n, noise, seed, kernel))


@memo(64)
def loo_question(name: str, n: int, noise: float, seed: int, kernel: str, optimum: float,
                 presets: tuple[float, ...]) -> dict:
    """The Kernel regression page's question (``kernel_regression.loo_question``), computed once per dataset and
    kernel, not on every rerun."""
    d = dataset(name, n, noise, seed)
    return kernel_regression.loo_question(d["x"], d["y"], kernel, optimum, presets)


@memo(64)
def heatmap_regimes(name: str, n: int, noise: float, seed: int, kernel: str, n_queries: int) -> dict:
    """The numbers the heatmap page's notice quotes for the smallest and a large bandwidth."""
    return attention_heatmap.regimes_of(dataset(name, n, noise, seed), kernel, n_queries)


@st.cache_resource(max_entries=4, show_spinner=False)   # the page shows spin.cost; shared by all sessions
def attention_cost(d: int) -> dict:
    """The measured cost rows of the Efficient attention page (``efficient_attention._cost``), timed once per
    server."""
    return efficient_attention.FIGURES["attention_cost"].compute(d=d)


def offline_lesson(name: str, lang: str, lecture: bool) -> bytes:
    """A lesson as one offline HTML file (``explorer.offline``, about 5 MB with plotly.js inside)."""
    return with_plotly_inside(_offline_lesson(name, lang, lecture)).encode()


@memo(32)
def _offline_lesson(name: str, lang: str, lecture: bool) -> str:
    """The lesson's file without plotly.js (0.1 to 2.4 MB): computed once per lesson, language and mode (32 at most,
    each 0.1 to 7 s of CPU: Live training's trains its recorded run), then kept under the byte budget."""
    return lesson_html(name, lang, lecture)
