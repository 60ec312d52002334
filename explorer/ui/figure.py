"""Drawing a figure on a page: lecture styling, then the chart, then one compact export control.

A drawn figure is kept (``DRAWN``, in the server's byte budget: ``explorer.ui.memory``), keyed on everything that
decides it: its lesson and name, its data, its marks, the language, lecture mode, height cap and theme. Drawing is
pure, so a student who moves a slider to a value somebody in the class already chose, or a rerun that leaves a
figure's inputs alone (the kernel shapes when the bandwidth moves), reuses the finished figure instead of building
it again with plotly (5-25 ms a figure here).
"""

from __future__ import annotations

import hashlib
import html
import pickle
from contextlib import nullcontext

import numpy as np
import pandas  # noqa: F401  (see below)
import streamlit as st

from ..figures.dark import dark
from ..figures.describe import data_array, description, with_description
from ..figures.files import MIME, image_formats_available, to_bytes
from ..figures.style import LECTURE, NORMAL, prepared
from . import follow as following
from .cache import spec_data
from .follow import Follow
from .internals import ReadyFigure, kept_key, typed_array
from .memory import Kept
from .state import lang, lecture_mode, room_above, tr

# pandas is imported with this module, before any session can draw: plotly's validators and JSON encoder read
# sys.modules["pandas"] without importing it, and while another thread (the start-up thread, or a session computing
# a table) was half way through importing pandas they found the half-built module and the page raised
# ("partially initialized module 'pandas' has no attribute 'Series'"). An import of a module that another thread
# is importing waits for it, so once this module is loaded pandas is whole.


def dark_theme() -> bool:
    """Whether the viewer's page is dark (their OS preference, or Streamlit's settings menu)."""
    return st.context.theme.type == "dark"


SLIDER_FONT = 12     # px: the step labels of the slider under a followed figure
LECTURE_MAIN_HEIGHT = 450     # px: a page's main figure under its title on a 1280 x 720 projector
# the longest title line (in Latin letters; a CJK character counts two) that fits a half-width chart, normally
# at 1400 px and in lecture mode at 1280 px
TITLE_WIDTH = {False: 58, True: 44}
MAIN_TITLE_WIDTH = 56      # lecture mode's one main figure, beside the controls: about 800 px wide


DRAWN = Kept("drawn figures", 256)     # in the server's byte budget (explorer.ui.memory), with its other caches
FOLLOWED = Kept("followed figures", 64)   # a followed figure's frames (per setting of the other controls) and the
#                                           figure sent with them (explorer.ui.follow); heavier, so fewer kept


def figure_key(*parts) -> bytes | None:
    """A digest of everything a drawn figure depends on, or None when a part cannot be pickled (then the figure
    is drawn every time, as before)."""
    try:
        return hashlib.blake2b(pickle.dumps(parts, protocol=pickle.HIGHEST_PROTOCOL), digest_size=16).digest()
    except (pickle.PicklingError, TypeError, AttributeError):
        return None


ARRAYS = ("x", "y", "z", "customdata")        # the trace properties that carry data arrays
SINGLE_RANGE = (1e-30, 1e30)                   # |values| float32 holds to 7 digits with room to spare


def single_precision(fig) -> ReadyFigure:
    """``fig`` for the browser (a ``ReadyFigure``: its dict, built once), its float64 data arrays as float32: half
    the bytes, and 7 significant digits where a chart shows 3. A colour array (a heatmap's z, on a linear colour
    scale) sends values under 1e-30 as 0; any other array with a nonzero value outside ``SINGLE_RANGE`` (a log axis
    down to 1e-40, say) stays float64. The exports keep ``fig`` itself, in float64 (a CSV is read as numbers)."""
    out = fig.to_dict()
    for trace in out["data"]:
        for name in ARRAYS:
            value = data_array(trace.get(name))
            if isinstance(value, np.ndarray) and value.dtype == np.float64:
                if name == "z":
                    value = np.where(np.abs(value) < SINGLE_RANGE[0], 0.0, value)
                size = np.abs(value[np.isfinite(value) & (value != 0)])
                if not size.size or (size.min() >= SINGLE_RANGE[0] and size.max() <= SINGLE_RANGE[1]):
                    trace[name] = typed_array(value.astype(np.float32))    # (to_dict encoded the rest)
    return ReadyFigure(out)


def _styled(fig, lecture: bool, cap: tuple[int, bool], dark_page: bool, language: str | None,
            copy: bool = True) -> tuple:
    """The figure as exported (light, full precision, with its description in ``language``; None: a followed
    figure's frame, which needs none) and as sent to this page (its theme, float32 data); ``copy`` False: ``fig``
    was drawn for this call, and is styled in place."""
    height, wide = cap
    width = MAIN_TITLE_WIDTH if lecture and wide else TITLE_WIDTH[lecture]
    fig = prepared(fig, LECTURE if lecture else NORMAL, width, height if lecture and height else None, copy=copy)
    if language is not None:
        with_description(fig, str(language))
    return fig, single_precision(dark(fig, "rgba(0,0,0,0)") if dark_page else fig)


ASKED = "explorer-asked"     # the key of the container holding a revealed question's figure and its Export


MIN_MAIN_HEIGHT = 300        # px: the least a main figure is shrunk to, whatever is drawn above it
# px: in lecture mode, the most a revealed question's figure is tall when it is not the page's main one, so that
# the verdict (up to two lines), a row between them and its Export fit a 720 px screen under Streamlit's header
ASKED_HEIGHT = 400


def _cap(main: bool | int, key: str, asked: bool = False) -> tuple[int, bool]:
    """The height cap of a figure and whether it is drawn wide: (0, False) unless it is the page's ``main`` figure,
    whose cap is ``main`` px (True: ``LECTURE_MAIN_HEIGHT``) less the rows drawn above it (``state.room_above``,
    the chart's ``key``); a ``main`` of True is the page's one main figure, beside the controls in lecture mode
    (``MAIN_TITLE_WIDTH``), a height is one of two side by side. Another figure that shows a revealed answer
    (``asked``) is capped at ``ASKED_HEIGHT``."""
    if not main:
        return (ASKED_HEIGHT if asked else 0), False
    return max(MIN_MAIN_HEIGHT, (LECTURE_MAIN_HEIGHT if main is True else int(main)) - room_above(key)), main is True


# plotly's mode bar, less the buttons a double click or a drag already gives (zoom in and out, autoscale): each
# button is a stop of the Tab order, eight a chart before
CHART_CONFIG = {"displaylogo": False, "modeBarButtonsToRemove": ["zoomIn2d", "zoomOut2d", "autoScale2d"]}


def _chart(light, drawn, key: str) -> None:
    # the figure in words, for a screen reader (visually hidden: base.css's .explorer-alt), just before the chart
    st.html(f'<p class="explorer-alt" role="note">{html.escape(tr("ui.figure_alt"))} '
            f'{html.escape(description(light))}</p>')
    st.plotly_chart(drawn, key=kept_key(key, drawn), theme=None, config=CHART_CONFIG)   # (a live view's chart:
    # the same key while its structure is, updated in place by web/live.mjs; internals.charts_kept_by_key)
    export_control(light, key)         # exports are light (slides, paper) unless the popover asks for dark


def show(fig, key: str, main: bool | int = False) -> None:
    """Draw a plotly figure with its own styling (Streamlit's theme would override legends and fonts),
    in the lecture style when lecture mode is on, with an export control under it. In lecture mode the page's
    ``main`` figure is kept short enough to stay on screen with its controls (``main`` = a height in px, or
    True for ``LECTURE_MAIN_HEIGHT``)."""
    _chart(*_styled(fig, lecture_mode(), _cap(main, key), dark_theme(), lang()), key)


def show_spec(spec, data: dict | None = None, key: str | None = None, main: bool | int = False,
              follow: Follow | None = None, **marks) -> dict:
    """Draw a lesson figure's ``Spec`` (``<lesson>.figures(values)[name]``: what the export writes too) with its
    marks and ``marks``; returns its data (computed, and cached, when not given) for the page's sentences. The
    finished figure is reused when the same data, marks, language, lecture mode and theme were drawn before; a
    figure of live state (a model being trained, new at every tick) is drawn and not kept, so it does not push the
    class's figures out of ``DRAWN``. ``follow``: the control whose values the figure is also sent at, as frames
    a slider under it plays while dragged (``explorer.ui.follow``)."""
    data = spec_data(spec) if data is None else data
    asked = marks.get("answer") is not None       # the figure a revealed question asked about
    language, lecture, dark_page, cap = lang(), lecture_mode(), dark_theme(), _cap(main, key or spec.name, asked)
    kept_as = figure_key(spec.lesson, spec.name, dict(data), dict(spec.marks), marks, str(language), lecture, cap,
                         dark_page) if spec.figure_def.cached else None
    light, drawn = DRAWN.get(kept_as,
                             lambda: _styled(spec.draw(data, language, **marks), lecture, cap, dark_page, language,
                                             copy=False))
    if follow is not None:
        drawn = _following(spec, follow, drawn, kept_as, marks, language, lecture, cap, dark_page)
    with st.container(key=ASKED) if asked else nullcontext():     # what Reveal scrolls onto the screen (predict.py)
        _chart(light, drawn, key or spec.name)
    if follow is not None:
        following.listen(follow)
    return data


def _following(spec, follow: Follow, drawn, kept_as, marks, language, lecture, cap, dark_page):
    """``drawn`` with frames at the followed control's grid (built once per server for the other settings) and at
    its current value, and the slider that plays them; ``drawn`` itself when the figure does not change over the
    grid, or changes in its traces' number or kind."""
    grid = follow.grid()

    def build():
        figs = {}
        for value in grid:
            try:
                at = follow.specs_at({**follow.values, follow.param.key: value})[spec.name]
                figs[value] = _styled(at.draw(spec_data(at), language, **marks), lecture, cap, dark_page,
                                      None, copy=False)[1].to_dict()
            except ValueError:          # a value the other settings rule out: no frame
                continue
        changes = following.varying(list(figs.values())) if len(figs) > 1 else None
        return None if changes is None else (changes, {v: following.frame(f, v, changes) for v, f in figs.items()})

    built = FOLLOWED.get(figure_key("frames", spec.lesson, spec.name, follow.others(), grid, marks, str(language),
                                    lecture, cap, dark_page), build)
    if built is None:
        return drawn

    def compose():
        changes, framed = built
        base = drawn.to_dict()
        framed = {v: f for v, f in framed.items() if f is not None}
        if not any(following.same(v, follow.current) for v in framed):
            now = following.frame(base, follow.current, changes)
            if now is None:
                return drawn
            framed = dict(sorted({**framed, follow.current: now}.items()))
        return ReadyFigure(following.attach(base, follow, framed, SLIDER_FONT, dark_page, with_slider=not lecture))
    kept = None if kept_as is None else figure_key("followed", kept_as, follow.others(), follow.current, grid)
    return FOLLOWED.get(kept, compose)


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
