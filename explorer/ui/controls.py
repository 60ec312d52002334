"""Controls used by more than one page: the dataset and the kernel/bandwidth pickers."""

from __future__ import annotations

import math

import numpy as np
import streamlit as st

from ..data import DATASETS
from ..kernels import KERNELS
from .state import SHARED_DEFAULTS, init_state

PRESETS = {"over-fit": 0.05, "good": 0.5, "over-smooth": 10.0}


def _bandwidth_grid() -> list[float]:
    """Log-spaced bandwidths from 0.01 to 20 (40 per decade), presets included exactly."""
    values = {float(f"{10 ** (k / 40):.3g}") for k in range(-80, 53)}
    values = {v for v in values if all(abs(v / p - 1) > 0.03 for p in PRESETS.values())}
    return sorted(values | set(PRESETS.values()))


BANDWIDTHS = _bandwidth_grid()
TEMPERATURES = [float(f"{t:.3g}") for t in np.logspace(np.log10(0.05), 2, 67)]  # 0.05 to 100


def snap_bandwidth(h: float) -> float:
    """The grid bandwidth nearest to h on a log scale."""
    return min(BANDWIDTHS, key=lambda b: abs(math.log(b / h)))


def _set_bandwidth(value: float) -> None:
    st.session_state["nw.bandwidth"] = snap_bandwidth(value)


def dataset_controls() -> None:
    """Dataset, size, noise and seed, in the sidebar; shared by every page that uses the data."""
    init_state(SHARED_DEFAULTS)
    with st.sidebar:
        st.subheader("Data")
        st.selectbox("Dataset", list(DATASETS), key="data.name",
                     format_func=lambda k: f"{DATASETS[k].display}", help="Seeded toy datasets.")
        spec = DATASETS[st.session_state["data.name"]]
        st.latex(spec.formula)
        st.slider("Training points n", 10, 2000, key="data.n", step=10,
                  help="From 10 to 2000 points.")
        st.slider("Noise sd σ_ε", 0.0, 2.0, key="data.noise", step=0.05,
                  help="Standard deviation of the Gaussian noise added to y (0 to 2).")
        st.number_input("Seed", 0, 9999, key="data.seed", step=1,
                        help="Same seed, same points (0 to 9999).")


def kernel_bandwidth_controls(container=None) -> None:
    """The kernel select box, the log-scale bandwidth slider and the three presets."""
    init_state(SHARED_DEFAULTS)
    box = container or st
    box.selectbox("Kernel", list(KERNELS), key="nw.kernel",
                  format_func=lambda k: KERNELS[k].display)
    st.session_state["nw.bandwidth"] = snap_bandwidth(st.session_state["nw.bandwidth"])
    box.select_slider("Bandwidth h (log scale, 0.01 to 20)", options=BANDWIDTHS,
                      key="nw.bandwidth", format_func=lambda v: f"{v:g}",
                      help="Width of the kernel, in the units of x.")
    box.caption("Presets: " + " · ".join(f"{v:g} {label}" for label, v in PRESETS.items()))
    cols = box.columns(len(PRESETS))
    for col, (label, value) in zip(cols, PRESETS.items(), strict=True):
        col.button(f"h = {value:g}", on_click=_set_bandwidth, args=(value,), help=f"{label} (h = {value:g})",
                   width="stretch", key=f"preset.{value}")


def set_bandwidth_button(label: str, value: float, key: str) -> None:
    """A button that moves the shared bandwidth slider to ``value`` (snapped to the grid)."""
    st.button(label, on_click=_set_bandwidth, args=(value,), key=key)
