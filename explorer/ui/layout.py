"""Page furniture: explanation blocks that fold away in lecture mode."""

from __future__ import annotations

import streamlit as st

from .state import lecture_mode, tr


def explanation(key: str):
    """A titled block of explanation (title = UI text ``key``): a section normally, a collapsed expander
    in lecture mode."""
    title = tr(key)
    if lecture_mode():
        return st.expander(title, expanded=False)
    box = st.container()
    box.subheader(title)
    return box
