"""Session state shared between pages.

Streamlit deletes a widget's state when a run does not draw that widget (e.g. after switching
page). Re-saving the shared keys at the top of every run keeps them, so the bandwidth chosen on one
page is still there on the next.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import streamlit as st

SHARED_DEFAULTS: dict[str, Any] = {
    "data.name": "sine_mix",
    "data.n": 200,
    "data.noise": 0.3,
    "data.seed": 0,
    "nw.kernel": "gaussian",
    "nw.bandwidth": 0.5,
}


def init_state(defaults: Mapping[str, Any]) -> None:
    """Put defaults into session state for keys that have no value yet."""
    for key, value in defaults.items():
        if key not in st.session_state:
            st.session_state[key] = value


def lecture_mode() -> bool:
    return bool(st.session_state.get("ui.lecture", False))


def keep_shared_state() -> None:
    """Initialise the cross-page keys and stop Streamlit from dropping them between pages.

    Call it once per run, before any widget is drawn (app.py does; so does each page, so that a
    page also works when run on its own, as in the AppTest suite).
    """
    init_state(SHARED_DEFAULTS)
    if "ui.lecture" not in st.session_state:             # ?lecture=1 turns lecture mode on
        st.session_state["ui.lecture"] = st.query_params.get("lecture", "0") in ("1", "true", "yes")
    for key in (*SHARED_DEFAULTS, "ui.lecture"):
        st.session_state[key] = st.session_state[key]
