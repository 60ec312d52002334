"""Page furniture: the app's style sheet, the lesson's question, explanation blocks that fold away in
lecture mode."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import streamlit as st

from .state import lecture_mode, tr

# Every run: buttons wrap their label instead of cutting it to "S…"; below 1000 px the sidebar narrows and
# charts that stood side by side stack, each at full width; the live view is not faded while it redraws (it
# updates in place, twice a second). The custom property marks the sheet as applied: the browser tests wait
# for it, since the element that carries it can arrive after the page's first text on a fresh load.
_BASE_CSS = """
:root { --explorer-styled: 1; }
.stButton button p, .stDownloadButton button p, [data-testid="stPageLink"] p {
  white-space: normal; overflow-wrap: break-word; text-overflow: clip; }
.stButton button, .stDownloadButton button { height: auto; min-height: 2.5rem; }
[data-baseweb="tag"] { max-width: none; }
[data-baseweb="tag"] span { overflow: visible; text-overflow: clip; max-width: none; }
@media (max-width: 1000px) {
  section[data-testid="stSidebar"][data-collapsed="false"] { width: 220px !important; min-width: 220px !important; }
  [data-testid="stMainBlockContainer"] { padding-left: 1.25rem; padding-right: 1.25rem; }
  [data-testid="stSidebar"] .katex { font-size: 0.95em; }
  [data-testid="stHorizontalBlock"]:has([data-testid="stPlotlyChart"]) { flex-wrap: wrap; }
  [data-testid="stHorizontalBlock"]:has([data-testid="stPlotlyChart"]) > [data-testid="stColumn"] {
    min-width: 100%; }
}
.st-key-live-view [data-stale="true"] { opacity: 1 !important; transition: none !important; }
[class*="st-key-lesson-card-"] { position: relative; }
[class*="st-key-lesson-card-"] [data-testid="stElementContainer"]:has([data-testid="stPageLink"]) { position: static; }
[class*="st-key-lesson-card-"] [data-testid="stPageLink"] a::after { content: ""; position: absolute; inset: 0; }
[class*="st-key-lesson-card-"]:hover { border-color: var(--primary-color, #1f77b4); }
"""

# Lecture mode: everything one step larger (Streamlit sizes text and controls in rem), less empty space above
# the title, so that a page's main figure is on screen at 1280 x 720 without scrolling.
_LECTURE_CSS = """
html { font-size: 19px; }
[data-testid="stMainBlockContainer"] { padding-top: 3.9rem; padding-bottom: 2rem; }
[data-testid="stMain"] h1 { font-size: 2rem; padding: 0 0 0.2rem 0; }
[data-testid="stMain"] h3 { font-size: 1.35rem; }
"""


def page_style() -> None:
    """The app's style sheet (the lecture one on top when lecture mode is on)."""
    st.html(f"<style>{_BASE_CSS}{_LECTURE_CSS if lecture_mode() else ''}</style>")


def question(key: str) -> None:
    """The question a page opens with: a paragraph normally; in lecture mode one line that opens on click (the
    lecturer says it; the figure gets the screen)."""
    if lecture_mode():
        with st.expander(tr("ui.question"), expanded=False):
            st.markdown(tr(key).split("**", 2)[-1].strip())     # without its bold "The question." lead
    else:
        st.markdown(tr(key))


def controls_and_figure(n_columns: int, widths=None) -> tuple[list, object]:
    """Places for a page's controls and for its main figure: normally ``n_columns`` columns of controls above a
    full-width figure; in lecture mode the controls stacked in one narrow column beside the figure, so that
    both are on a projector's screen at once. Returns (one container per control column, the figure's)."""
    if lecture_mode():
        left, right = st.columns([1, 2.4], gap="medium")
        return [left] * n_columns, right
    columns = st.columns(widths or n_columns)
    return list(columns), st.container()


def explanation(key: str):
    """A titled block of explanation (title = UI text ``key``): a section normally, a collapsed expander
    in lecture mode."""
    title = tr(key)
    if lecture_mode():
        return st.expander(title, expanded=False)
    box = st.container()
    box.subheader(title)
    return box


def on_demand(label: str, help: str, key: str, compute: Callable[[], Any]) -> Any:
    """A button that runs ``compute`` (a measurement of this machine, too slow or too noisy for every rerun) and
    keeps its result for this session only; returns the result once there is one, else None."""
    if st.button(label, help=help, key=key):
        st.session_state[f"{key}.result"] = compute()
    return st.session_state.get(f"{key}.result")
