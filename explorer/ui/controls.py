"""Controls used by more than one page: the dataset and the kernel/bandwidth pickers."""

from __future__ import annotations

import hashlib
import math

import streamlit as st

from ..data import DATASETS, EXAMPLE_CSV, MAX_UPLOAD_ROWS, dataset_from_table, read_csv
from ..lessons import shared
from ..lessons.shared import BANDWIDTHS, UPLOAD, presets, snap_bandwidth
from ..outside import Outside
from . import cache
from .control import ON_CHANGE, draw, rerun_whole_page, value
from .layout import write
from .state import init_state, say, tr


def _set_bandwidth(value: float) -> None:
    st.session_state[shared.BANDWIDTH.key] = snap_bandwidth(value)


def _load_dataset_defaults() -> None:
    """Picking a dataset loads its own n, noise and "good" bandwidth (the presets are judged at those)."""
    if st.session_state[shared.DATASET.key] in DATASETS:
        st.session_state.update(shared.dataset_defaults(st.session_state[shared.DATASET.key]))


ON_CHANGE[shared.DATASET] = _load_dataset_defaults


def dataset_controls() -> tuple:
    """Dataset pickers in the sidebar, shared by every page that uses the data.

    Returns the key of the dataset to use, ``(name, n, noise, seed)``, for the cached functions in
    ``explorer.ui.cache``. An uploaded file that is rejected leaves the previous dataset in place, and the
    reason is said twice: under the uploader, and at the top of the page, above the figure that did not change.
    """
    init_state({"data.last_valid": tuple(p.default for p in shared.DATA_PARAMS)})
    with st.sidebar:
        st.subheader(tr("data.header"))
        draw(shared.DATASET)
        if st.session_state["data.name"] == UPLOAD:
            ds, problem = _upload_controls()
        else:
            st.latex(DATASETS[st.session_state["data.name"]].formula)
            for param in (shared.N, shared.NOISE, shared.SEED):
                draw(param)
            ds, problem = (st.session_state["data.name"], st.session_state["data.n"], st.session_state["data.noise"],
                           st.session_state["data.seed"]), None
    if problem:
        st.error(problem)
    st.session_state["data.last_valid"] = ds
    return ds


def _upload_controls() -> tuple[tuple, str | None]:
    """File uploader, column pickers and options, validated through ``explorer.data``; returns the dataset key
    to use and the sentence saying why a file or a choice was refused (None when nothing was).

    A file that cannot be read is taken out of the uploader (which would otherwise keep listing it as if it were
    in use); a readable file whose columns or options fail stays, so that the options can be changed."""
    st.download_button(tr("data.example"), EXAMPLE_CSV.read_bytes(), file_name="noisy_sine.csv", mime="text/csv",
                       width="stretch")
    state = st.session_state
    uploader_key = f"data.file.{state.setdefault('data.file_generation', 0)}"   # a new key empties the uploader
    mb = st.get_option("server.maxUploadSize")      # (.streamlit/config.toml)
    upload = st.file_uploader(tr("data.file", mb=mb, rows=MAX_UPLOAD_ROWS), type=["csv", "txt"], key=uploader_key,
                              help=tr("data.file_help", mb=mb, rows=MAX_UPLOAD_ROWS))
    problem = None
    if upload is not None:
        state["data.unreadable"] = None
        try:
            table = read_csv(upload.getvalue())
        except ValueError as err:
            state["data.unreadable"] = tr("data.rejected", file=Outside(upload.name), error=say(err))
            state["data.file_generation"] += 1
            st.rerun()
        # the column boxes belong to this file (their keys carry its digest): another file gets boxes of its own,
        # listing its own columns, never the previous file's
        file_id = hashlib.sha1(upload.getvalue()).hexdigest()[:12]
        for key in [k for k in state if str(k).startswith(("data.x_col.", "data.y_col.")) and
                    not str(k).endswith(file_id)]:
            del state[key]
        x_col = st.selectbox(tr("data.x_col"), table.numeric, index=0, key=f"data.x_col.{file_id}")
        rest = [c for c in table.numeric if c != x_col]
        y_col = st.selectbox(tr("data.y_col"), rest, index=0, key=f"data.y_col.{file_id}")
        drop = st.checkbox(tr("data.drop"), key="data.drop")
        standardise = st.checkbox(tr("data.standardise"), value=True, key="data.standardise")
        try:
            ds, notes = dataset_from_table(table, x_col, y_col, drop, standardise)
        except ValueError as err:
            problem = tr("data.rejected", file=Outside(upload.name), error=say(err))
        else:
            digest = hashlib.sha1(upload.getvalue() + repr((x_col, y_col, drop, standardise)).encode()).hexdigest()
            state["data.uploaded"] = {"sha": digest[:16], "x": ds.x, "y": ds.y, "description": ds.description,
                                      "columns": (x_col, y_col),
                                      "standardised": any(n.key == "note.csv_standardised" for n in notes)}
            for note in notes:
                st.info(say(note))
            st.caption(say(ds.description))
    problem = problem or state.get("data.unreadable")
    current = state.get("data.uploaded")
    if problem:
        st.error(problem)
        if current is not None:
            st.caption(tr("data.previous_upload", description=say(current["description"])))
    if current is None:
        if not problem:
            st.info(tr("data.no_upload", mb=mb))
        return state["data.last_valid"], problem
    return (f"{UPLOAD}:{current['sha']}", len(current["x"]), 0.0, 0), problem


TYPED_PART = "part.typed"      # the typed-bandwidth box, a part of its page (its placeholder is the current h)


def kernel_bandwidth_controls(ds: tuple, on_move=None) -> None:
    """The kernel select box, the log-scale bandwidth slider and the dataset's three presets, captioned with
    what the lesson says of them on the data shown (``explorer.lessons.shared.presets_caption``). ``on_move``: the
    slider's ``on_change`` (a page that reruns only the parts the bandwidth changes: ``control.rerun_alone``,
    naming ``TYPED_PART`` among them: the typed box is then a part too)."""
    draw(shared.KERNEL)
    st.session_state[shared.BANDWIDTH.key] = snap_bandwidth(value(shared.BANDWIDTH))
    draw(shared.BANDWIDTH, on_change=on_move)
    name, kernel = ds[0], value(shared.KERNEL)
    write(cache.presets_caption(*ds, kernel))
    offered = presets(name)
    for col, (label, h) in zip(st.columns(len(offered)), offered.items(), strict=True):
        tip = tr("nw.preset_tip", label=tr(f"nw.preset.{label}"), h=h) if name in DATASETS else f"h = {h:g}"
        col.button(f"h = {h:g}", on_click=_set_bandwidth, args=(h,), width="stretch", help=tip,
                   key=f"preset.{label}")
    (st.fragment(typed_bandwidth_control, key=TYPED_PART) if on_move else typed_bandwidth_control)()


def _typed_bandwidth() -> None:
    """Apply the typed bandwidth: an empty box does nothing; a number outside the range gets one sentence and
    changes nothing; a number between two slider steps moves the slider to the nearest and says so."""
    text = st.session_state.get("nw.typed", "").strip()
    st.session_state["nw.typed_error"] = st.session_state["nw.typed_note"] = None
    if not text:
        return
    try:
        h = float(text.replace(",", "."))          # a decimal comma is accepted too
    except ValueError:
        h = math.nan
    if not BANDWIDTHS[0] <= h <= BANDWIDTHS[-1]:  # also refuses nan
        st.session_state["nw.typed_error"] = tr("nw.typed_error", text=text[:40], lo=BANDWIDTHS[0],
                                                hi=BANDWIDTHS[-1])
        return
    snapped = snap_bandwidth(h)
    st.session_state["nw.bandwidth"] = snapped
    if not math.isclose(snapped, h, rel_tol=1e-9):
        st.session_state["nw.typed_note"] = tr("nw.typed_snapped", typed=h, h=snapped,
                                               pct=abs(snapped / h - 1))
    rerun_whole_page()          # the slider and every figure show the new h (a refused number changes only the box)


def typed_bandwidth_control() -> None:
    """A text box for typing a bandwidth (its placeholder is the current h); bad input gets one sentence and
    changes nothing, a value between slider steps says which step it became."""
    st.text_input(tr("nw.typed"), key="nw.typed", on_change=_typed_bandwidth,
                  placeholder=f"{st.session_state['nw.bandwidth']:g}",
                  help=tr("nw.typed_help", lo=BANDWIDTHS[0], hi=BANDWIDTHS[-1]))
    if st.session_state.get("nw.typed_error"):
        st.error(st.session_state["nw.typed_error"])
    elif st.session_state.get("nw.typed_note"):
        st.caption(st.session_state["nw.typed_note"])


def set_bandwidth_button(label: str, value: float, key: str) -> None:
    """A button that moves the shared bandwidth slider to ``value`` (snapped to the grid)."""
    st.button(label, on_click=_set_bandwidth, args=(value,), key=key)
