"""A lesson's settings drawn as widgets. A setting is a ``Param`` of its lesson module (``explorer.lessons.params``);
the page draws it here and reads all of its lesson's values in one call::

    d = draw(scaling.D, column)             # the widget, in the session's language; returns its value
    specs = scaling.figures(values(scaling))

A setting's state key is its param's key; everything else about it (range, options, default, the texts of label
and help, how a link spells a value) is the param's. Only the UI's own part lives here: the widget, the value in
session state and the callback a move runs (``ON_CHANGE`` for a setting whose move always does the same thing, such
as picking a dataset, which loads its own n and noise).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from types import ModuleType
from typing import Any, NoReturn

import streamlit as st
from streamlit.errors import StreamlitAPIException

from ..lessons.params import Param
from . import state as ui_state
from .state import tr

ON_CHANGE: dict[Param, Callable[[], None]] = {}     # what a move of a setting always runs, wherever it is drawn


def value(param: Param) -> Any:
    """The setting's current value (its default before the widget is drawn; a default that depends on other
    settings reads them from the session)."""
    return st.session_state.get(param.key, param.default_value(st.session_state))


def values(lesson: ModuleType) -> dict[str, Any]:
    """Every setting of a lesson module by key: what ``<lesson>.figures`` and its sentences take."""
    return {p.key: value(p) for p in lesson.PARAMS}


def option_text(param: Param, option: Any) -> str:
    """How an option (or a slider's value) reads on screen, in the session's language."""
    return param.option_text(option, ui_state.lang())


def draw(param: Param, where: Any = st, *, lo: float | None = None, hi: float | None = None,
         label: dict | None = None, help: dict | None = None, options: Sequence | None = None,
         on_change: Callable[[], None] | None = None, **extra) -> Any:
    """Draw the setting's widget in ``where`` (``st``, a column, the sidebar) and return its value. ``lo``/``hi``
    narrow a slider's range for this run (the value is clamped into it, and the help's "{lo} to {hi}" says so; a
    range narrowed to one value is said in a caption, as a slider cannot show it);
    ``options`` narrows a multiselect's choices for this run (chosen values no longer offered are dropped);
    ``label``/``help`` fill placeholders of their texts; ``on_change`` runs when the viewer moves it (else the
    setting's ``ON_CHANGE``); ``extra`` goes to the widget (e.g. ``disabled``)."""
    p, state = param, st.session_state
    if p.key not in state:
        state[p.key] = p.default_value(state)
    choices = list(p.options if options is None else options) if p.options is not None else None
    if p.kind == "multiselect" and options is not None:
        state[p.key] = [v for v in state[p.key] if v in choices]
    text = tr(p.label, **(label or {}))
    shown = extra.pop("format_func", lambda option: option_text(p, option))
    common = {"key": p.key, "help": p.help_text(ui_state.lang(), lo, hi, **(help or {})),
              "on_change": on_change or ON_CHANGE.get(p), **extra}
    if p.kind == "slider":
        kind = type(state[p.key])
        bottom, top = kind(p.lo if lo is None else lo), kind(p.hi if hi is None else hi)
        state[p.key] = min(max(state[p.key], bottom), top)
        if bottom == top:               # narrowed to one value (one block of keys): no slider can show it
            where.caption(tr("ui.only_value", label=text, value=option_text(p, bottom)))
            return bottom
        return where.slider(text, bottom, top, step=p.step, **common)
    if p.kind == "number":
        return where.number_input(text, int(p.lo), int(p.hi), step=p.step or 1, **common)
    if p.kind == "select_slider":
        return where.select_slider(text, options=choices, format_func=shown, **common)
    if p.kind == "select":
        return where.selectbox(text, choices, format_func=shown, **common)
    if p.kind == "multiselect":
        return where.multiselect(text, choices, format_func=shown, placeholder=tr("ui.choose"),
                                 max_selections=p.max_selections, **common)
    return where.toggle(text, **common)


def rerun_alone(*parts: str) -> Callable[[], None]:
    """The ``on_change`` of a control whose move changes only the named parts of its page (``page.page_part``): its
    move reruns those parts and leaves the rest of the page as it was drawn. When the last run did not draw one of
    them (the page stopped above it: a question to answer first), the move reruns the whole page."""
    def rerun() -> None:
        try:
            st.rerun(list(parts))
        except StreamlitAPIException:      # a part the last run did not draw: Streamlit knows no such fragment
            return                          # (a callback that returns reruns the whole page)
    return rerun


def rerun_whole_page() -> None:
    """From a callback of a widget inside a part (a figure's own slider, the typed bandwidth): rerun the whole
    page, not only the part, since controls outside it show the value the callback set."""
    st.rerun()


class PageStopped(Exception):
    """Ends a page's run early: ``lesson_page`` catches it, then still draws the page's footer and writes its URL.
    (``st.stop`` would not let it: once a stop is requested, Streamlit sends nothing more from that run, so a page
    waiting for its question's answer would leave the address without its settings.)"""


def stop_page(error: str | None = None) -> NoReturn:
    """End the page here, after ``error`` (one sentence saying what is wrong) when given."""
    if error:
        st.error(error)
    raise PageStopped
