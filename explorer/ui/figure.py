"""Drawing a figure on a page: lecture styling, then the chart, then one compact export control."""

from __future__ import annotations

import streamlit as st

from ..export import MIME, image_formats_available, to_bytes
from ..figures.style import LECTURE, NORMAL, restyle
from .state import lang, lecture_mode, tr


def show(fig, key: str) -> None:
    """Draw a plotly figure with its own styling (Streamlit's theme would override legends and fonts),
    in the lecture style when lecture mode is on, with an export control under it."""
    style = LECTURE if lecture_mode() else NORMAL
    fig = restyle(fig, style)
    st.plotly_chart(fig, key=key, theme=None, config={"displaylogo": False})
    export_control(fig, key)


def show_lesson(name: str, data: dict, key: str | None = None, **marks) -> None:
    """Draw the lesson figure ``name`` from its data (``cache.lesson_data``) and its marks (the current
    value a figure points at): the figure the export makes with the same parameters."""
    from ..figures.registry import FIGURES

    show(FIGURES[name].draw({**data, **marks}, lang()), key=key or name)


def export_control(fig, name: str) -> None:
    """PNG, SVG, offline HTML and CSV downloads. The buttons are built only while the popover is open
    (opening it reruns the page), and the bytes only when a button is clicked: a page with ten
    figures does not pay for forty download buttons on every slider move."""
    popover = st.popover(tr("ui.export"), icon=":material/download:", key=f"export.{name}", on_change="rerun")
    if not popover.open:
        return
    with popover:
        formats = ["png", "svg", "html", "csv"] if image_formats_available(fig) else ["html", "csv"]
        for fmt in formats:
            st.download_button(fmt.upper(), data=lambda fmt=fmt: to_bytes(fig, fmt), file_name=f"{name}.{fmt}",
                               mime=MIME[fmt], on_click="ignore", key=f"export.{name}.{fmt}", width="stretch")
        if "png" not in formats:
            st.caption(tr("ui.export_no_browser"))
