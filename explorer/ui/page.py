"""A lesson page's frame: its settings restored from a link and written back, kept across pages, reset on
request; its title, question and Previous / Next; the sidebar's footer.

    with lesson_page(scaling, question="sc.question") as aside:     # the lesson module
        ...                                                          # the page, top to bottom
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable, Iterator, Sequence
from types import ModuleType

import streamlit as st
import torch

from ..device import describe_device, page_threads
from ..i18n import text_width
from ..lessons.offline import RECIPES
from ..lessons.params import Param
from ..lessons.shared import SHARED
from .cache import offline_lesson
from .control import PageStopped, value
from .internals import rerun_of_parts
from .layout import question as draw_question
from .links import publish, restore
from .memory import collect_if_grown
from .navigation import previous_next
from .state import KEEP, clear_room, init_state, keep_shared_state, lang, lecture_mode, take_room, tr

# Lecture mode's title beside Previous / Next, in two fifths of a 1280 px page (427 px, about 18-20 px a Latin-letter
# unit at its 38 px): a longer title takes a second line of ``TITLE_LINE`` px
TITLE_UNITS = 21
TITLE_LINE = 46


def _reset(params: Sequence[Param]) -> None:
    for p in params:
        st.session_state.pop(p.key, None)


def _reset_everything() -> None:
    keep = {k: st.session_state[k] for k in ("ui.lang", "ui.lecture", "ui.predict") if k in st.session_state}
    for key in list(st.session_state):
        if not key.startswith("url.restored."):         # a link is read once per session, even after a reset
            del st.session_state[key]
    st.session_state.update(keep)


def reset_controls(name: str, params: Sequence[Param]) -> None:
    """The sidebar's "Reset this page" and "Reset everything" buttons."""
    with st.sidebar:
        c1, c2 = st.columns(2)
        c1.button(tr("ui.reset_page"), help=tr("ui.reset_page_help"), on_click=_reset, args=(params,),
                  key=f"reset.{name}", width="stretch")
        c2.button(tr("ui.reset_all"), help=tr("ui.reset_all_help"), on_click=_reset_everything, key="reset.all",
                  width="stretch")


def sidebar_footer(name: str, params: Sequence[Param]) -> None:
    """Under the page's sidebar controls: the reset buttons and the device the page computes on."""
    reset_controls(name, params)
    try:
        st.sidebar.caption(tr("ui.device", device=describe_device()))
    except ValueError as err:
        st.sidebar.error(str(err))


def export_stem(lesson: ModuleType) -> str:
    """The start of an exported figure's file name: the page, then its key settings (``kernel-regression``,
    ``gaussian_h0.2``), joined by ``_``; the figure's own name follows."""
    tags = [fmt.format(p.dump(value(p))).replace("_", "-") for p, fmt in getattr(lesson, "FILE_NAME", ())]
    return "_".join([lesson_name(lesson).replace("_", "-"), *tags])


def lesson_name(lesson: ModuleType) -> str:
    """``kernel_regression`` for ``explorer.lessons.kernel_regression``."""
    return lesson.__name__.rsplit(".", 1)[-1]


@contextlib.contextmanager
def lesson_page(lesson: ModuleType, question: str) -> Iterator:
    """A page's setup in one block: shared state kept, the URL's values restored, every default in place,
    the title and the page's question (UI text ``question``) drawn, Previous / Next links (at the top in
    lecture mode, at the end otherwise); on leaving (also through ``stop_page``), the values written back to
    the URL. Yields a container under the question (beside it in lecture mode, where the question is one
    line) for what a page wants there. ``lesson``: the lesson module (its name, its settings in link order and
    those its exported figures' file names carry)."""
    name, params = lesson_name(lesson), lesson.PARAMS
    torch.set_num_threads(page_threads())        # this run's thread (torch's setting is per thread): see page_threads
    clear_room()                                              # nothing is drawn above the main figure yet
    kept = st.session_state.setdefault(KEEP, set())           # kept across pages from now on (state.py)
    kept.update(p.key for p in (*SHARED, *params))
    keep_shared_state()
    init_state({p.key: p.default_value(st.session_state) for p in SHARED})
    restore(params, name)
    for p in params:                                          # in order: a default may read the ones before it
        init_state({p.key: p.default_value(st.session_state)})
    sidebar_footer(name, params)
    st.session_state["ui.export_stem"] = export_stem(lesson)     # read by figure.export_control
    lecture = lecture_mode()
    if lecture:                                    # one row: the title, then the way on
        title, links = st.columns([2, 3], vertical_alignment="center")
        title.title(tr(f"page.{name}"))
        if text_width(tr(f"page.{name}")) > TITLE_UNITS:          # in two lines: the main figure is that shorter
            take_room("title", TITLE_LINE)
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
        publish(params)                # every run, whatever the page waits for: a reload keeps the view
        collect_if_grown()             # what finished runs left in cycles, once the process has grown (memory.py)


def part_alone() -> bool:
    """Whether this run is a rerun of parts of the page only (a control's ``rerun_alone``)."""
    return rerun_of_parts()


def page_part(lesson: ModuleType, key: str, run_every: float | None = None) -> Callable:
    """A part of a lesson page that reruns alone when a control whose ``on_change`` is ``rerun_alone(key, …)``
    moves (an ``st.fragment`` named ``key``): moving the bandwidth redraws the fit and its readouts, not the kernel
    shapes or the sidebar. On such a rerun the part writes what a whole run writes at its end (the URL, the export
    file names), and a ``stop_page`` in it ends the part (on a whole run it ends the page, as anywhere else). Its
    arguments are those of the last whole run: what the moved control changes is read inside the part. ``run_every``
    (seconds): the part also reruns alone that often (a panel that follows a model being trained).

        @page_part(kernel_regression, "kr.fit")
        def fit(ds): ...                      # called once, where it is drawn
    """
    def wrap(draw: Callable) -> Callable:
        @st.fragment(key=key, run_every=run_every)
        @functools.wraps(draw)
        def part(*args, **kwargs) -> bool:
            alone = part_alone()
            if alone:
                torch.set_num_threads(page_threads())
                st.session_state["ui.export_stem"] = export_stem(lesson)
            try:
                draw(*args, **kwargs)
            except PageStopped:         # (raised out of a fragment it would be drawn as an error)
                return not alone
            finally:
                if alone:
                    publish(lesson.PARAMS)
            return False

        @functools.wraps(draw)
        def drawn(*args, **kwargs) -> None:
            if part(*args, **kwargs):
                raise PageStopped
        return drawn
    return wrap


def _footer(name: str, lecture: bool) -> None:
    if not lecture:                    # (in lecture mode they sit beside the title)
        st.divider()
        previous_next(name)
    _offline_button(name, lecture)


def _offline_button(name: str, lecture: bool) -> None:
    """The lesson as one HTML file that opens without a server (explorer.offline), in the page's language and
    mode; made only when asked for (the button's data is a function), then cached (``cache.offline_lesson``)."""
    if name not in RECIPES:
        return
    language = lang()
    st.download_button(tr("off.button"), data=lambda: offline_lesson(name, language, lecture),
                       file_name=f"{name}{'-lecture' if lecture else ''}-{language}.html", mime="text/html",
                       icon=":material/download:", help=tr("off.button_help"), on_click="ignore",
                       key=f"offline.{name}")
