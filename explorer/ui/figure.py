"""Drawing a figure on a page: one call, the same options everywhere."""

from __future__ import annotations

import streamlit as st


def show(fig, key: str) -> None:
    """Draw a plotly figure with its own styling (Streamlit's theme would override legends and fonts)."""
    st.plotly_chart(fig, key=key, theme=None, config={"displaylogo": False})
