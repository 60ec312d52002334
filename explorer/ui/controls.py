"""Controls used by more than one page: the dataset and the kernel/bandwidth pickers."""

from __future__ import annotations

import hashlib
import math
from pathlib import Path

import numpy as np
import streamlit as st

from ..data import DATASETS, EXAMPLE_CSV, MAX_UPLOAD_ROWS, dataset_from_table, read_csv
from ..kernels import KERNELS
from .state import SHARED_DEFAULTS, init_state, say, tr
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
        st.subheader(tr("data.header"))
        st.selectbox(tr("data.dataset"), [*DATASETS, UPLOAD], key="data.name",
                     format_func=lambda k: tr("data.upload_option") if k == UPLOAD else tr(f"dataset.{k}"),
                     help=tr("data.dataset_help"))
        if st.session_state["data.name"] == UPLOAD:
            return _upload_controls()
        spec = DATASETS[st.session_state["data.name"]]
        st.latex(spec.formula)
        st.slider(tr("data.n"), 10, 2000, key="data.n", step=10, help=tr("data.n_help"))
        st.slider(tr("data.noise"), 0.0, 2.0, key="data.noise", step=0.05, help=tr("data.noise_help"))
        st.number_input(tr("ui.seed"), 0, 9999, key="data.seed", step=1, help=tr("ui.seed_help"))
    ds = (st.session_state["data.name"], st.session_state["data.n"], st.session_state["data.noise"],
          st.session_state["data.seed"])
    st.session_state["data.last_valid"] = ds
    return ds


def dataset_label(name: str) -> str:
    """How a dataset key reads in titles."""
    return tr("data.your_data") if name.startswith(UPLOAD) else tr(f"dataset.{name}")


def _upload_controls() -> tuple:
    """File uploader, column pickers and options; validates through ``explorer.data``."""
    st.download_button(tr("data.example"), Path(EXAMPLE_CSV).read_bytes() if Path(EXAMPLE_CSV).exists()
                       else b"", file_name="noisy_sine.csv", mime="text/csv", width="stretch")
    upload = st.file_uploader(tr("data.file"), type=["csv", "txt"], key="data.file",
                              help=tr("data.file_help", rows=f"{MAX_UPLOAD_ROWS:,}"))
    previous = st.session_state.get("data.uploaded")
    if upload is not None:
        try:
            table = read_csv(upload.getvalue())
            for key in ("data.x_col", "data.y_col"):          # columns of a previous file
                if st.session_state.get(key) not in table.numeric:
                    st.session_state.pop(key, None)
            x_col = st.selectbox(tr("data.x_col"), table.numeric, index=0, key="data.x_col")
            rest = [c for c in table.numeric if c != x_col]
            y_col = st.selectbox(tr("data.y_col"), rest, index=0, key="data.y_col")
            drop = st.checkbox(tr("data.drop"), key="data.drop")
            standardise = st.checkbox(tr("data.standardise"), value=True, key="data.standardise")
            ds, notes = dataset_from_table(table, x_col, y_col, drop, standardise)
            digest = hashlib.sha1(upload.getvalue() + repr((x_col, y_col, drop, standardise)).encode()).hexdigest()
            st.session_state["data.uploaded"] = {"sha": digest[:16], "x": ds.x, "y": ds.y,
                                                 "description": ds.description}
            for note in notes:
                st.info(say(note))
            st.caption(say(ds.description))
        except ValueError as err:
            st.error(say(err))
            if previous is not None:
                st.caption(tr("data.previous_upload", description=say(previous["description"])))
    current = st.session_state.get("data.uploaded")
    if current is None:
        st.info(tr("data.no_upload"))
        return st.session_state["data.last_valid"]
    ds = (f"{UPLOAD}:{current['sha']}", len(current["x"]), 0.0, 0)
    st.session_state["data.last_valid"] = ds
    return ds


def kernel_bandwidth_controls() -> None:
    """The kernel select box, the log-scale bandwidth slider and the three presets."""
    init_state(SHARED_DEFAULTS)
    st.selectbox(tr("nw.kernel"), list(KERNELS), key="nw.kernel", format_func=lambda k: tr(f"kernel.{k}"))
    st.session_state["nw.bandwidth"] = snap_bandwidth(st.session_state["nw.bandwidth"])
    st.select_slider(tr("nw.bandwidth"), options=BANDWIDTHS, key="nw.bandwidth", format_func=lambda v: f"{v:g}",
                     help=tr("nw.bandwidth_help"))
    st.caption(tr("nw.presets"))
    cols = st.columns(len(PRESETS))
    for col, (label, value) in zip(cols, PRESETS.items(), strict=True):
        col.button(f"h = {value:g}", on_click=_set_bandwidth, args=(value,), width="stretch",
                   help=f"{tr('nw.preset.' + label)} (h = {value:g})", key=f"preset.{value}")
    typed_bandwidth_control()


def _typed_bandwidth() -> None:
    text = st.session_state.get("nw.typed", "").strip()
    try:
        h = float(text.replace(",", "."))          # a decimal comma is accepted too
    except ValueError:
        h = math.nan
    if not BANDWIDTHS[0] <= h <= BANDWIDTHS[-1]:  # also refuses nan
        st.session_state["nw.typed_error"] = tr("nw.typed_error", text=text[:40], lo=f"{BANDWIDTHS[0]:g}",
                                                hi=f"{BANDWIDTHS[-1]:g}")
        return
    st.session_state["nw.typed_error"] = None
    st.session_state["nw.bandwidth"] = snap_bandwidth(h)


def typed_bandwidth_control() -> None:
    """A text box for typing a bandwidth; bad input gets one sentence and changes nothing."""
    st.text_input(tr("nw.typed"), key="nw.typed", on_change=_typed_bandwidth, placeholder="0.3",
                  help=tr("nw.typed_help", lo=f"{BANDWIDTHS[0]:g}", hi=f"{BANDWIDTHS[-1]:g}"))
    if st.session_state.get("nw.typed_error"):
        st.error(st.session_state["nw.typed_error"])


def set_bandwidth_button(label: str, value: float, key: str) -> None:
    """A button that moves the shared bandwidth slider to ``value`` (snapped to the grid)."""
    st.button(label, on_click=_set_bandwidth, args=(value,), key=key)
