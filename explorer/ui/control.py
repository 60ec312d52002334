"""A lesson's settings drawn as widgets: ``Control`` is a ``Param`` (``explorer.lessons.params``) on a page.

The lesson module declares its settings headless; the page asks for them as controls and draws them::

    C = controls(scaling)                   # one Control per Param of the lesson, C.ALL in link order
    d = C.D.draw(column)                    # the widget, in the session's language; returns its value

A control's state key is its param's key; everything else about it (range, options, default, the texts of label
and help, how a link spells a value) is the param's. Only the UI's own part lives here: the widget, the value in
session state and the callback a change runs.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from types import ModuleType, SimpleNamespace
from typing import Any, NoReturn

import streamlit as st
from streamlit.errors import StreamlitAPIException

from ..lessons.params import Param
from . import state as ui_state
from .state import tr


@dataclass(frozen=True)
class Control:
    param: Param
    on_change: Callable[[], None] | None = None     # run when the viewer changes the widget

    def __getattr__(self, name: str) -> Any:        # key, kind, default, options, lo, hi, check, parse, dump …
        return getattr(self.param, name)

    def default_value(self) -> Any:
        """The default; one that depends on other settings reads them from the session."""
        return self.param.default_value(st.session_state)

    def format(self, option: Any) -> str:
        return self.param.option_text(option, ui_state.lang())   # looked up per call: the session's language

    def draw(self, where: Any = st, *, lo: float | None = None, hi: float | None = None, label: dict | None = None,
             help: dict | None = None, options: Sequence | None = None, **extra) -> Any:
        """Draw the widget in ``where`` (``st``, a column, the sidebar) and return its value. ``lo``/``hi`` narrow
        a slider's range for this run (the value is clamped into it, and the help's "{lo} to {hi}" says so);
        ``options`` narrows a multiselect's choices for this run (chosen values no longer offered are dropped);
        ``label``/``help`` fill placeholders of their texts; ``extra`` goes to the widget (e.g. ``disabled``)."""
        p, state = self.param, st.session_state
        if p.key not in state:
            state[p.key] = self.default_value()
        choices = list(p.options if options is None else options) if p.options is not None else None
        if p.kind == "multiselect" and options is not None:
            state[p.key] = [v for v in state[p.key] if v in choices]
        text = tr(p.label, **(label or {}))
        shown = extra.pop("format_func", self.format)
        common = {"key": p.key, "help": p.help_text(ui_state.lang(), lo, hi, **(help or {})),
                  "on_change": self.on_change, **extra}
        if p.kind == "slider":
            kind = type(state[p.key])
            bottom, top = kind(p.lo if lo is None else lo), kind(p.hi if hi is None else hi)
            state[p.key] = min(max(state[p.key], bottom), top)
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

    @property
    def value(self) -> Any:
        """The current value (the default before the widget is drawn)."""
        return st.session_state.get(self.param.key, self.default_value())


def controls(lesson: ModuleType, on_change: Mapping[Param, Callable[[], None]] | None = None,
             shared: Sequence[Control] = ()) -> SimpleNamespace:
    """The controls of a lesson module: an attribute per ``Param`` it declares (``C.D`` for ``lesson.D``), ``ALL``
    (its ``PARAMS`` in link order), ``FILE_NAME`` (its file-name settings as (control, format) pairs), ``NAME``
    and ``values()``: every setting's current value by key (what ``<lesson>.figures`` takes). ``shared``:
    controls declared by the UI for params several lessons read (the dataset's, whose callbacks load a
    dataset's defaults); ``on_change``: callbacks for the lesson's own params."""
    given = {c.param: c for c in shared}
    made = {p: given.get(p) or Control(p, (on_change or {}).get(p)) for p in lesson.PARAMS}
    attrs = {name: made[p] for name, p in vars(lesson).items() if isinstance(p, Param) and p in made}
    every = tuple(made[p] for p in lesson.PARAMS)
    return SimpleNamespace(**attrs, ALL=every, NAME=lesson.__name__.rsplit(".")[-1],
                           FILE_NAME=tuple((made[p], fmt) for p, fmt in getattr(lesson, "FILE_NAME", ())),
                           values=lambda: {c.key: c.value for c in every})


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
