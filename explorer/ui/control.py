"""Controls declared once, and the setup every page shares.

A ``Control`` says everything about one widget: its session-state key (also its name in the URL), the widget,
its range or options, its default, and the UI-text keys of its label and help. From that one spec it draws
the widget, puts the default in place, checks a value, and reads and writes the value in the URL::

    LAYERS = Control("train.layers", "slider", default=1, lo=1, hi=4, label="lt.layers")

    with lesson_page("live_training", [LAYERS, ...], question="lt.question"):   # state kept, URL restored ...
        LAYERS.draw()
        ...                                               # ... and published when the page ends

A value from a link that the spec refuses, and a link key that names no control, is left out with a one-line
notice and the default stays.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, NoReturn

import streamlit as st

from .._checks import one_of
from .state import init_state, keep_shared_state, lecture_mode, tr

WIDGETS = ("slider", "select_slider", "select", "multiselect", "toggle", "checkbox", "number")
DECLARED: set[str] = set()       # the key of every Control declared in this process (kept across pages)


@dataclass(frozen=True)
class Control:
    key: str                                   # session-state key, also the URL name
    widget: str                                # one of WIDGETS
    default: Any                               # a value, or a function of the session state giving one
    label: str                                 # UI-text key of the label
    help: str | None = None                    # UI-text key of the help tooltip
    options: tuple | None = None               # the choices of select, select_slider and multiselect
    lo: float | None = None                    # bounds of slider and number
    hi: float | None = None
    step: float | None = None
    names: str | None = None                   # options read as UI text "<names><option>" (e.g. "kernel.")
    fmt: str | None = None                     # or as format(option, fmt), e.g. "g"
    text: Callable[[Any], str] | None = None   # or as text(option), in the session's language
    max_selections: int | None = None          # multiselect only
    on_change: Callable[[], None] | None = None
    not_in_links: dict | None = None           # value -> text key of why a link cannot carry it

    def __post_init__(self):
        one_of(self.widget, WIDGETS, "widget")
        DECLARED.add(self.key)

    # ------------------------------------------------------------------ values
    def default_value(self) -> Any:
        return self.default() if callable(self.default) else self.default

    def check(self, value: Any) -> Any:
        """``value`` as this control holds it; ``ValueError`` when the control cannot take it."""
        if self.widget in ("toggle", "checkbox"):
            if not isinstance(value, bool):
                raise ValueError(value)
            return value
        if self.widget == "multiselect":
            chosen = [self._option(v) for v in value]
            if self.max_selections and len(chosen) > self.max_selections:
                raise ValueError(value)
            return list(dict.fromkeys(chosen))
        if self.options is not None:
            return self._option(value)
        kind = type(self.default_value())
        number = float(value)
        if not math.isfinite(number) or not self.lo <= number <= self.hi:
            raise ValueError(value)
        if kind is int:
            if not number.is_integer():
                raise ValueError(value)
            return int(number)
        return number

    def _option(self, value: Any) -> Any:
        for option in self.options:
            same = option == value if isinstance(option, str) or isinstance(value, str) \
                else math.isclose(float(option), float(value))
            if same:
                return option
        raise ValueError(value)

    # ------------------------------------------------------------------ URL
    def parse(self, raw: str) -> Any:
        """The value a URL parameter stands for (``ValueError`` when it names none)."""
        if self.widget in ("toggle", "checkbox"):
            words = {"1": True, "true": True, "yes": True, "on": True, "0": False, "false": False, "no": False,
                     "off": False}
            if raw.lower() not in words:
                raise ValueError(raw)
            return words[raw.lower()]
        if self.widget == "multiselect":
            return self.check([self._from_text(v) for v in raw.split(",") if v.strip()])
        return self.check(self._from_text(raw))

    def _from_text(self, raw: str) -> Any:
        sample = self.options[0] if self.options else self.default_value()
        return raw if isinstance(sample, str) else float(raw)

    def dump(self, value: Any) -> str:
        if self.widget in ("toggle", "checkbox"):
            return "1" if value else "0"
        if self.widget == "multiselect":
            return ",".join(_text(v) for v in value)
        return _text(value)

    # ------------------------------------------------------------------ drawing
    def format(self, option: Any) -> str:
        if self.text:
            return self.text(option)
        if self.names:
            return tr(f"{self.names}{option}")
        return format(option, self.fmt) if self.fmt else str(option)

    def draw(self, where: Any = st, *, lo: float | None = None, hi: float | None = None, label: dict | None = None,
             help: dict | None = None, options: Sequence | None = None, **extra) -> Any:
        """Draw the widget in ``where`` (``st``, a column, the sidebar) and return its value. ``lo``/``hi`` narrow
        a slider's range for this run (the value is clamped into it); ``options`` narrows a multiselect's
        choices for this run (chosen values no longer offered are dropped); ``label``/``help`` fill placeholders
        of their texts; ``extra`` goes to the widget (e.g. ``disabled``)."""
        state = st.session_state
        if self.key not in state:
            state[self.key] = self.default_value()
        choices = list(self.options if options is None else options) if self.options is not None else None
        if self.widget == "multiselect" and options is not None:
            state[self.key] = [v for v in state[self.key] if v in choices]
        text = tr(self.label, **(label or {}))
        shown = extra.pop("format_func", self.format)
        common = {"key": self.key, "help": tr(self.help, **(help or {})) if self.help else None,
                  "on_change": self.on_change, **extra}
        if self.widget == "slider":
            kind = type(state[self.key])
            bottom, top = kind(self.lo if lo is None else lo), kind(self.hi if hi is None else hi)
            state[self.key] = min(max(state[self.key], bottom), top)
            return where.slider(text, bottom, top, step=self.step, **common)
        if self.widget == "number":
            return where.number_input(text, int(self.lo), int(self.hi), step=self.step or 1, **common)
        if self.widget == "select_slider":
            return where.select_slider(text, options=choices, format_func=shown, **common)
        if self.widget == "select":
            return where.selectbox(text, choices, format_func=shown, **common)
        if self.widget == "multiselect":
            return where.multiselect(text, choices, format_func=shown, placeholder=tr("ui.choose"),
                                     max_selections=self.max_selections, **common)
        return (where.toggle if self.widget == "toggle" else where.checkbox)(text, **common)

    @property
    def value(self) -> Any:
        """The current value (the default before the widget is drawn)."""
        return st.session_state.get(self.key, self.default_value())


def _text(value: Any) -> str:
    return f"{value:g}" if isinstance(value, float) else str(value)


# ---------------------------------------------------------------------- the page's shared setup
def restore(controls: Sequence[Control], page: str) -> None:
    """Copy valid URL values into session state, once per session and page; say which were left out."""
    flag = f"url.restored.{page}"
    if st.session_state.get(flag):
        return
    st.session_state[flag] = True
    ignored, refusals = [], []
    by_key = {c.key: c for c in controls}
    for key, raw in st.query_params.items():
        c = by_key.get(key)
        if c is not None and c.not_in_links and raw in c.not_in_links:
            refusals.append(c.not_in_links[raw])
            continue
        try:
            if c is not None:
                st.session_state[c.key] = c.parse(raw)
            elif key not in LINK_SETTINGS or raw not in LINK_SETTINGS[key]:
                raise ValueError(raw)
        except (ValueError, TypeError):
            ignored.append(f"{key}={raw[:40]}")
    if ignored:
        st.warning(tr("ui.url_ignored", bad=tr("punct.list").join(ignored)))
    for text in dict.fromkeys(refusals):
        st.info(tr(text))


# what a link may say besides the page's controls (app-wide settings, read by ``state.keep_shared_state``)
_SWITCH = ("1", "true", "yes", "0", "false", "no")
LINK_SETTINGS = {"lecture": _SWITCH, "predict": _SWITCH, "lang": ("en", "zh")}


def _reset(controls: Sequence[Control]) -> None:
    for c in controls:
        st.session_state.pop(c.key, None)


def _reset_everything() -> None:
    keep = {k: st.session_state[k] for k in ("ui.lang", "ui.lecture", "ui.predict") if k in st.session_state}
    for key in list(st.session_state):
        if not key.startswith("url.restored."):         # a link is read once per session, even after a reset
            del st.session_state[key]
    st.session_state.update(keep)


def reset_controls(name: str, controls: Sequence[Control]) -> None:
    """The sidebar's "Reset this page" and "Reset everything" buttons."""
    with st.sidebar:
        c1, c2 = st.columns(2)
        c1.button(tr("ui.reset_page"), help=tr("ui.reset_page_help"), on_click=_reset, args=(controls,),
                  key=f"reset.{name}", width="stretch")
        c2.button(tr("ui.reset_all"), help=tr("ui.reset_all_help"), on_click=_reset_everything, key="reset.all",
                  width="stretch")


def publish(controls: Sequence[Control]) -> None:
    """Write the current values into the URL (plus lecture mode and language), so the address can be shared."""
    values = {c.key: c.dump(st.session_state[c.key]) for c in controls if c.key in st.session_state}
    if st.session_state.get("ui.lecture"):
        values["lecture"] = "1"
    if st.session_state.get("ui.predict", False) != st.session_state.get("ui.lecture", False):
        values["predict"] = "1" if st.session_state.get("ui.predict") else "0"       # only when not the default
    if st.session_state.get("ui.lang", "en") != "en":
        values["lang"] = st.session_state["ui.lang"]
    if dict(st.query_params) != values:
        st.query_params.from_dict(values)


def sidebar_footer(name: str, controls: Sequence[Control]) -> None:
    """Under the page's sidebar controls: the reset buttons and the device the page computes on."""
    from ..device import describe_device  # torch: imported by lesson pages only, never by the router

    reset_controls(name, controls)
    try:
        st.sidebar.caption(tr("ui.device", device=describe_device()))
    except ValueError as err:
        st.sidebar.error(str(err))


def export_stem(name: str, file_name: Sequence[tuple[Control, str]]) -> str:
    """The start of an exported figure's file name: the page, then its key settings (``kernel-regression``,
    ``gaussian_h0.2``), joined by ``_``; the figure's own name follows."""
    tags = [fmt.format(c.dump(c.value)).replace("_", "-") for c, fmt in file_name]
    return "_".join([name.replace("_", "-"), *tags])


class PageStopped(Exception):
    """Ends a page's run early: ``lesson_page`` catches it, then still draws the page's footer and writes its URL.
    (``st.stop`` would not let it: once a stop is requested, Streamlit sends nothing more from that run, so a page
    waiting for its question's answer would leave the address without its settings.)"""


def stop_page(error: str | None = None) -> NoReturn:
    """End the page here, after ``error`` (one sentence saying what is wrong) when given."""
    if error:
        st.error(error)
    raise PageStopped


@contextlib.contextmanager
def lesson_page(name: str, controls: Sequence[Control], question: str,
                file_name: Sequence[tuple[Control, str]] = ()) -> Iterator:
    """A page's setup in one block: shared state kept, the URL's values restored, every default in place,
    the title and the page's question (UI text ``question``) drawn, Previous / Next links (at the top in
    lecture mode, at the end otherwise); on leaving (also through ``stop_page``), the values written back to
    the URL. Yields a container under the question (beside it in lecture mode, where the question is one
    line) for what a page wants there. ``file_name``: the settings exported figures' file names carry."""
    from .controls import SHARED_CONTROLS  # the dataset and kernel controls (they import this module)
    from .layout import question as draw_question
    from .navigation import previous_next

    keep_shared_state()
    init_state({c.key: c.default_value() for c in SHARED_CONTROLS})
    restore(controls, name)
    init_state({c.key: c.default_value() for c in controls})
    sidebar_footer(name, controls)
    st.session_state["ui.export_stem"] = export_stem(name, file_name)     # read by figure.export_control
    lecture = lecture_mode()
    if lecture:                                    # one row: the title, then the way on
        title, links = st.columns([2, 3], vertical_alignment="center")
        title.title(tr(f"page.{name}"))
        previous_next(name, links, compact=True)
    else:
        st.title(tr(f"page.{name}"))
    where, aside = st.columns(2) if lecture else (st.container(), st.container())
    with where:
        draw_question(question)
    try:
        try:
            yield aside
        except PageStopped:            # a page stopped early (bad input, a question to answer first)
            pass
        _footer(name, lecture)
    finally:
        publish(controls)              # every run, whatever the page waits for: a reload keeps the view


def _footer(name: str, lecture: bool) -> None:
    from .navigation import previous_next

    if not lecture:                    # (in lecture mode they sit beside the title)
        st.divider()
        previous_next(name)
