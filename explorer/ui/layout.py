"""Page furniture: the app's style sheet (``explorer/ui/web/base.css``, ``lecture.css`` on top in lecture mode), the
lesson's question, explanation blocks that fold away in lecture mode."""

from __future__ import annotations

from collections.abc import Callable
from importlib.resources import files
from typing import Any

import streamlit as st

from ..lessons.base import Say, flatten
from .state import lang, lecture_mode, tr

WEB = files("explorer.ui") / "web"
BASE_CSS = (WEB / "base.css").read_text(encoding="utf-8")
LECTURE_CSS = (WEB / "lecture.css").read_text(encoding="utf-8")
DARK_CSS = (WEB / "dark.css").read_text(encoding="utf-8")


def page_style() -> None:
    """The app's style sheet (the lecture one on top when lecture mode is on, the dark one when the page is dark)."""
    dark = DARK_CSS if st.context.theme.type == "dark" else ""
    st.html(f"<style>{BASE_CSS}{LECTURE_CSS if lecture_mode() else ''}{dark}</style>")


def heading_over_main(text: str) -> None:
    """A section heading drawn right above the page's main figure; none in lecture mode, where the figure's own
    title names it and the row goes to the figure and its Export (on a 720 px screen)."""
    if not lecture_mode():
        st.subheader(text)


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


def write(said: Say | list | None, where: Any = st, join: str = "punct.space") -> None:
    """Show what a lesson says (a ``Say``, or a list of them said as one paragraph) in the session's language, as
    the first one's tone asks: a paragraph, a caption, or an info, success, warning or error box. ``join``: what
    goes between them, a UI text (``punct.space``, a space in English and none in 中文) or a literal string."""
    items = flatten(said)
    if not items:
        return
    language = lang()
    text = (tr(join) if join.startswith("punct.") else join).join(s.in_lang(language) for s in items)
    {"text": where.markdown, "caption": where.caption, "info": where.info, "success": where.success,
     "warning": where.warning, "error": where.error}[items[0].tone](text)
