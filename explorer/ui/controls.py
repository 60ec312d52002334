"""Controls used by more than one page: the dataset and the kernel/bandwidth pickers."""

from __future__ import annotations

import hashlib
import math
from pathlib import Path

import numpy as np
import streamlit as st

from .._checks import positive_number
from ..data import DATASETS, EXAMPLE_CSV, MAX_UPLOAD_ROWS, dataset_from_table, read_csv
from ..kernels import KERNELS
from .state import SHARED_DEFAULTS, init_state
from .urlstate import Param

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


UPLOAD = "upload"
SHARED_PARAMS = [Param("data.name", "str", tuple(DATASETS)), Param("data.n", "int", lo=10, hi=2000),
                 Param("data.noise", "float", lo=0, hi=2), Param("data.seed", "int", lo=0, hi=9999),
                 Param("nw.kernel", "str", tuple(KERNELS)), Param("nw.bandwidth", "float", tuple(BANDWIDTHS))]


def dataset_controls() -> tuple:
    """Dataset pickers in the sidebar, shared by every page that uses the data.

    Returns the key of the dataset to use, ``(name, n, noise, seed)``, for the cached functions in
    ``explorer.ui.cache``. An uploaded file that is rejected leaves the previous dataset in place.
    """
    init_state(SHARED_DEFAULTS)
    init_state({"data.last_valid": ("sine_mix", 200, 0.3, 0)})
    with st.sidebar:
        st.subheader("Data")
        st.selectbox("Dataset", [*DATASETS, UPLOAD], key="data.name",
                     format_func=lambda k: "Your own CSV" if k == UPLOAD else DATASETS[k].display,
                     help="Seeded toy datasets, or a CSV file of your own.")
        if st.session_state["data.name"] == UPLOAD:
            return _upload_controls()
        spec = DATASETS[st.session_state["data.name"]]
        st.latex(spec.formula)
        st.slider("Training points n", 10, 2000, key="data.n", step=10, help="From 10 to 2000 points.")
        st.slider("Noise sd σ_ε", 0.0, 2.0, key="data.noise", step=0.05,
                  help="Standard deviation of the Gaussian noise added to y (0 to 2).")
        st.number_input("Seed", 0, 9999, key="data.seed", step=1, help="Same seed, same points (0 to 9999).")
    ds = (st.session_state["data.name"], st.session_state["data.n"], st.session_state["data.noise"],
          st.session_state["data.seed"])
    st.session_state["data.last_valid"] = ds
    return ds


def dataset_label(name: str) -> str:
    """How a dataset key reads in titles."""
    return "your data" if name.startswith(UPLOAD) else DATASETS[name].display


def _upload_controls() -> tuple:
    """File uploader, column pickers and options; validates through ``explorer.data``."""
    st.download_button("Download an example CSV", Path(EXAMPLE_CSV).read_bytes() if Path(EXAMPLE_CSV).exists()
                       else b"", file_name="noisy_sine.csv", mime="text/csv", width="stretch")
    upload = st.file_uploader("CSV file (header row, numeric columns)", type=["csv", "txt"], key="data.file",
                              help=f"Up to {MAX_UPLOAD_ROWS:,} rows; the size limit is set in .streamlit/config.toml.")
    previous = st.session_state.get("data.uploaded")
    if upload is not None:
        try:
            table = read_csv(upload.getvalue())
            for key in ("data.x_col", "data.y_col"):          # columns of a previous file
                if st.session_state.get(key) not in table.numeric:
                    st.session_state.pop(key, None)
            x_col = st.selectbox("x column", table.numeric, index=0, key="data.x_col")
            rest = [c for c in table.numeric if c != x_col]
            y_col = st.selectbox("y column", rest, index=0, key="data.y_col")
            drop = st.checkbox("Drop rows with missing or non-finite values", key="data.drop")
            standardise = st.checkbox("Standardise huge values (above 1e6)", value=True, key="data.standardise")
            ds, notes = dataset_from_table(table, x_col, y_col, drop, standardise)
            digest = hashlib.sha1(upload.getvalue() + repr((x_col, y_col, drop, standardise)).encode()).hexdigest()
            st.session_state["data.uploaded"] = {"sha": digest[:16], "x": ds.x, "y": ds.y,
                                                 "description": ds.description}
            for note in notes:
                st.info(note)
            st.caption(ds.description)
        except ValueError as err:
            st.error(str(err))
            if previous is not None:
                st.caption("Still using the previous upload: " + previous["description"])
    current = st.session_state.get("data.uploaded")
    if current is None:
        st.info("No usable upload yet: the pages keep showing the previous dataset.")
        return st.session_state["data.last_valid"]
    ds = (f"{UPLOAD}:{current['sha']}", len(current["x"]), 0.0, 0)
    st.session_state["data.last_valid"] = ds
    return ds


def kernel_bandwidth_controls() -> None:
    """The kernel select box, the log-scale bandwidth slider and the three presets."""
    init_state(SHARED_DEFAULTS)
    st.selectbox("Kernel", list(KERNELS), key="nw.kernel",
                  format_func=lambda k: KERNELS[k].display)
    st.session_state["nw.bandwidth"] = snap_bandwidth(st.session_state["nw.bandwidth"])
    st.select_slider("Bandwidth h (log scale, 0.01 to 20)", options=BANDWIDTHS,
                      key="nw.bandwidth", format_func=lambda v: f"{v:g}",
                      help="Width of the kernel, in the units of x.")
    st.caption("Presets: " + " · ".join(f"{v:g} {label}" for label, v in PRESETS.items()))
    cols = st.columns(len(PRESETS))
    for col, (label, value) in zip(cols, PRESETS.items(), strict=True):
        col.button(f"h = {value:g}", on_click=_set_bandwidth, args=(value,), help=f"{label} (h = {value:g})",
                   width="stretch", key=f"preset.{value}")
    typed_bandwidth_control()


def _typed_bandwidth() -> None:
    text = st.session_state.get("nw.typed", "").strip()
    try:
        h = positive_number(text.replace(",", "."), "bandwidth", upper=BANDWIDTHS[-1])
        if h < BANDWIDTHS[0]:
            raise ValueError(f"bandwidth must be at least {BANDWIDTHS[0]:g}, got {h:g}.")
    except ValueError as err:
        st.session_state["nw.typed_error"] = (f"{err} Type a number from {BANDWIDTHS[0]:g} to {BANDWIDTHS[-1]:g}; "
                                              "the bandwidth stays at its previous value.")
        return
    st.session_state["nw.typed_error"] = None
    st.session_state["nw.bandwidth"] = snap_bandwidth(h)


def typed_bandwidth_control() -> None:
    """A text box for typing a bandwidth; bad input gets one sentence and changes nothing."""
    st.text_input("…or type a bandwidth", key="nw.typed", on_change=_typed_bandwidth, placeholder="e.g. 0.3",
                  help=f"A number from {BANDWIDTHS[0]:g} to {BANDWIDTHS[-1]:g}, snapped to the slider's grid.")
    if st.session_state.get("nw.typed_error"):
        st.error(st.session_state["nw.typed_error"])


def set_bandwidth_button(label: str, value: float, key: str) -> None:
    """A button that moves the shared bandwidth slider to ``value`` (snapped to the grid)."""
    st.button(label, on_click=_set_bandwidth, args=(value,), key=key)
