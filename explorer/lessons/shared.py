"""Settings more than one lesson reads: the dataset, and the kernel and its bandwidth.

They are kept across pages and carried by every link of a page that uses them. The bandwidth slider runs over a
log-spaced grid that holds every dataset's three presets exactly.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np
import torch

from ..data import DATASETS, dataset_arrays
from ..i18n import Joined, Message, t
from ..kernels import KERNELS
from ..regression import defined_mse, nadaraya_watson
from .base import Say, says
from .params import Param

PRESET_LABELS = ("over-fit", "good", "over-smooth")
UPLOAD = "upload"
UPLOAD_PRESETS = (0.05, 0.5, 10.0)       # an upload has no true function: these get no verdict


def presets(name: str) -> dict[str, float]:
    """The dataset's preset bandwidths by label (over-fit, good, over-smooth at its default n and noise)."""
    values = DATASETS[name].presets if name in DATASETS else UPLOAD_PRESETS
    return dict(zip(PRESET_LABELS, values, strict=True))


def _bandwidth_grid() -> list[float]:
    """Log-spaced bandwidths from 0.01 to 20 (40 per decade), every dataset's presets included exactly."""
    exact = {h for spec in DATASETS.values() for h in spec.presets} | set(UPLOAD_PRESETS)
    values = {float(f"{10 ** (k / 40):.3g}") for k in range(-80, 53)}
    values = {v for v in values if all(abs(v / p - 1) > 0.03 for p in exact)}
    return sorted(values | exact)


BANDWIDTHS = _bandwidth_grid()
TEMPERATURES = [float(f"{t:.3g}") for t in np.logspace(np.log10(0.05), 2, 67)]  # 0.05 to 100


def snap_bandwidth(h: float) -> float:
    """The grid bandwidth nearest to h on a log scale."""
    return min(BANDWIDTHS, key=lambda b: abs(math.log(b / h)))


DATASET = Param("data.name", "select", "sine_mix", "data.dataset", "data.dataset_help",
                options=(*DATASETS, UPLOAD), names="dataset.", not_in_links={UPLOAD: "ui.url_upload"})
N = Param("data.n", "slider", 200, "data.n", "data.n_help", lo=10, hi=2000, step=10)
NOISE = Param("data.noise", "slider", 0.3, "data.noise", "data.noise_help", lo=0.0, hi=2.0, step=0.05)
SEED = Param("data.seed", "number", 0, "ui.seed", "ui.seed_help", lo=0, hi=9999)
KERNEL = Param("nw.kernel", "select", "gaussian", "nw.kernel", options=tuple(KERNELS), names="kernel.")
BANDWIDTH = Param("nw.bandwidth", "select_slider", 0.2, "nw.bandwidth", "nw.bandwidth_help",   # the sine mix's
                  options=tuple(BANDWIDTHS), fmt="g")                                          # "good" preset
DATA_PARAMS = (DATASET, N, NOISE, SEED)
SHARED = (*DATA_PARAMS, KERNEL, BANDWIDTH)          # kept across pages, in the link of every page that uses them


def dataset_key(values: Mapping[str, Any]) -> tuple:
    """(name, n, noise, seed) of the settings: what the data is computed from."""
    return tuple(values[p.key] for p in DATA_PARAMS)


def dataset_defaults(name: str) -> dict[str, Any]:
    """What picking a dataset sets: its own n, noise and "good" bandwidth (its presets are judged at those)."""
    spec = DATASETS[name]
    return {N.key: spec.default_n, NOISE.key: spec.default_noise, BANDWIDTH.key: snap_bandwidth(spec.presets[1])}


def dataset_label(name: str, lang: str) -> str:
    """How a dataset key reads in titles (an upload: "your data")."""
    return t("data.your_data", lang) if name.startswith(UPLOAD) else t(f"dataset.{name}", lang)


def data_of(values: Mapping[str, Any]) -> dict:
    """The generated dataset the settings name (an upload's arrays come from the page, not from here)."""
    return dataset_arrays(*dataset_key(values))


PRESET_MARGIN = 1.5     # a preset "over-fits" / "over-smooths" when its error is at least 1.5x the good one's


def preset_errors(data: Mapping, kernel: str, bandwidths: Mapping[str, float]) -> dict[str, float]:
    """Each labelled bandwidth's error against the true function (defined points only), by label."""
    grid, x, y = (torch.as_tensor(data[k]) for k in ("x_grid", "x", "y"))
    return {label: defined_mse(nadaraya_watson(grid, x, y, kernel, h).numpy(), data["true"])[0]
            for label, h in bandwidths.items()}


def preset_verdict(mse: Mapping[str, float]) -> bool:
    """True when the labels hold on this data: the "good" preset's error against the true function is
    at least ``PRESET_MARGIN`` times lower than both the over-fit and the over-smooth one's."""
    good = mse["good"]
    return bool(np.isfinite(good) and mse["over-fit"] > PRESET_MARGIN * good
                and mse["over-smooth"] > PRESET_MARGIN * good)


@says("nw.presets", "nw.presets_fail", "nw.presets_upload")
def presets_caption(name: str, kernel: str, data: Mapping | None = None) -> Say:
    """The caption under the bandwidth slider: the dataset's three presets, labelled over-fit / good / over-smooth
    only when the errors of ``kernel``'s fits against the true function on ``data`` (the data shown) bear the labels
    out (``preset_verdict``); an upload has no true function, so its presets get no label."""
    if name not in DATASETS:
        return Say("nw.presets_upload", tone="caption")
    values = presets(name)
    listing = Joined([Message("nw.preset_item", h=h, label=Message(f"nw.preset.{label}"))
                      for label, h in values.items()], "punct.middot")
    verdict = preset_verdict(preset_errors(data, kernel, values))
    spec = DATASETS[name]
    return Say("nw.presets" if verdict else "nw.presets_fail", tone="caption", presets=listing,
               dataset=Message(f"dataset.{name}"), n=spec.default_n, noise=spec.default_noise,
               kernel=Message(f"kernel.{kernel}"))
