"""Drawing a figure on a page: lecture styling, then the chart, then one compact export control."""

from __future__ import annotations

import streamlit as st

from ..figures.dark import dark
from ..figures.files import MIME, image_formats_available, to_bytes
from ..figures.style import LECTURE, NORMAL, prepared
from .cache import spec_data
from .state import lang, lecture_mode, tr


def dark_theme() -> bool:
    """Whether the viewer's page is dark (their OS preference, or Streamlit's settings menu)."""
    return st.context.theme.type == "dark"


LECTURE_MAIN_HEIGHT = 450     # px: a page's main figure under its title on a 1280 x 720 projector
# the longest title line (in Latin letters; a CJK character counts two) that fits a half-width chart, normally
# at 1400 px and in lecture mode at 1280 px
TITLE_WIDTH = {False: 58, True: 44}


def show(fig, key: str, main: bool | int = False) -> None:
    """Draw a plotly figure with its own styling (Streamlit's theme would override legends and fonts),
    in the lecture style when lecture mode is on, with an export control under it. In lecture mode the page's
    ``main`` figure is kept short enough to stay on screen with its controls (``main`` = a height in px, or
    True for ``LECTURE_MAIN_HEIGHT``)."""
    lecture = lecture_mode()
    cap = LECTURE_MAIN_HEIGHT if main is True else int(main)
    fig = prepared(fig, LECTURE if lecture else NORMAL, TITLE_WIDTH[lecture], cap if lecture and cap else None)
    drawn = dark(fig, "rgba(0,0,0,0)") if dark_theme() else fig
    st.plotly_chart(drawn, key=key, theme=None, config={"displaylogo": False})
    export_control(fig, key)           # exports are light (slides, paper) unless the popover asks for dark


def show_spec(spec, data: dict | None = None, key: str | None = None, main: bool | int = False, **marks) -> dict:
    """Draw a lesson figure's ``Spec`` (``<lesson>.figures(values)[name]``: what the export writes too) with its
    marks and ``marks``; returns its data (computed, and cached, when not given) for the page's sentences."""
    data = spec_data(spec) if data is None else data
    show(spec.draw(data, lang(), **marks), key=key or spec.name, main=main)
    return data


def file_stem(key: str) -> str:
    """An exported figure's file name without extension: page, figure, key settings
    (``kernel-regression_fit_gaussian_h0.2``), from what the page's ``lesson_page`` recorded this run."""
    page, *settings = st.session_state.get("ui.export_stem", "figure").split("_")
    return "_".join([page, key.replace("_", "-"), *settings])


def export_control(fig, name: str) -> None:
    """PNG, SVG, offline HTML and CSV downloads. The buttons are built only while the popover is open
    (opening it reruns the page), and the bytes only when a button is clicked: a page with ten
    figures does not pay for forty download buttons on every slider move."""
    popover = st.popover(tr("ui.export"), icon=":material/download:", key=f"export.{name}", on_change="rerun")
    if not popover.open:
        return
    with popover:
        formats = ["png", "svg", "html", "csv"] if image_formats_available(fig) else ["html", "csv"]
        if st.toggle(tr("ui.export_dark"), key=f"export.{name}.dark"):
            fig = dark(fig)
        buttons = st.columns(2)
        stem = file_stem(name)
        for i, fmt in enumerate(formats):
            buttons[i % 2].download_button(fmt.upper(), data=lambda fmt=fmt: to_bytes(fig, fmt),
                                           file_name=f"{stem}.{fmt}", mime=MIME[fmt], on_click="ignore",
                                           key=f"export.{name}.{fmt}", width="stretch")
        if "png" not in formats:
            st.caption(tr("ui.export_no_browser"))
