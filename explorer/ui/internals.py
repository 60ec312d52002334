"""The one place that touches names Streamlit, plotly and plotly.js do not document.

Each is something the app cannot do without and no public API offers. Each is listed here with the versions it was
written for, and ``tests/unit/test_internals.py`` has a test per name that fails, with a sentence naming it and these
versions, when an installed version no longer has it: an upgrade is caught by ``make test``, not mid-lecture.

Python (Streamlit): which page the browser asked for (``requested_page``), whether this run reruns parts of a page
only (``rerun_of_parts``), leaving the pages-directory mode a fresh server starts in (``leave_pages_directory_mode``),
the logger of the "missing ScriptRunContext" warning (``SCRIPT_RUN_CONTEXT_LOGGER``), the inline scripts of
Streamlit's page, which the app's Content-Security-Policy allows by their hashes (``front_end_inline_scripts``),
the ``uvicorn.Config`` that imports ``app.py`` (``loading_uvicorn_config``: ``explorer.connections`` sets on it
what a connection may cost).
Python (plotly): a figure handed to ``st.plotly_chart`` as a ready dict (``ReadyFigure``), a numpy array in plotly's
base64 form (``typed_array``), the dicts a Figure holds its traces and layout in (``figure_parts``: what keeping it
costs, ``explorer.ui.memory``).
JavaScript (``WEB``, given to the components in ``explorer/ui/web/*.mjs`` as ``data.internals``): plotly.js's frame
table and full layout on a graph div, Streamlit's slider value label, its script-state attribute and its header
bar. They travel as a JSON text: a nested dict in a component's data makes Streamlit import pandas (to look for data
frames in it) on the landing page.
The style sheets' ``data-testid`` selectors are Streamlit's too; the same test checks each against the installed
Streamlit's front end.
"""

from __future__ import annotations

import base64
import contextlib
import copy
import hashlib
import json
import re
import sys
import threading
from importlib.resources import files
from typing import Any

import plotly.graph_objects as go
import plotly.io
import streamlit as st
import streamlit.elements.plotly_chart as st_plotly_chart
import uvicorn
from _plotly_utils.utils import to_typed_array_spec
from streamlit.runtime.pages_manager import PagesManager
from streamlit.runtime.scriptrunner import get_script_run_ctx

WRITTEN_FOR = {"streamlit": "1.67.0", "plotly": "7.1.0"}     # plotly.js: the bundle that plotly 7.1.0 ships

SCRIPT_RUN_CONTEXT_LOGGER = "streamlit.runtime.scriptrunner_utils.script_run_context"

WEB = {
    "transition_data": "_transitionData",      # plotly.js: gd._transitionData._frameHash, frames by name
    "frame_hash": "_frameHash",
    "full_layout": "_fullLayout",              # plotly.js: gd._fullLayout, the layout as drawn (width, height)
    "slider_thumb_value": "stSliderThumbValue",   # Streamlit: the slider's value label, updated during a drag
    "script_state": "testScriptState",         # Streamlit: stApp's data-test-script-state ("running", …)
    "script_state_attribute": "data-test-script-state",
    "header": "stHeader",                      # Streamlit: the page's header bar, fixed over the top of the page
}
WEB_JSON = json.dumps(WEB)


def _ctx():
    return get_script_run_ctx()


def requested_page() -> str:
    """The page path the browser asked for on this run (empty for the app's root and for a click in the app):
    ``ScriptRunContext.pages_manager.intended_page_name``."""
    ctx = _ctx()
    return (ctx.pages_manager.intended_page_name or "") if ctx is not None else ""


def rerun_of_parts() -> bool:
    """Whether this run reruns some of the page's fragments only: ``ScriptRunContext.fragment_ids_this_run``."""
    ctx = _ctx()
    return bool(ctx and ctx.fragment_ids_this_run)


def leave_pages_directory_mode() -> bool:
    """A fresh server whose first request is a link to a page (``/masking``) runs that page's script on its own, the
    old pages/-directory way, because the process-wide switch Streamlit keeps for it
    (``PagesManager.uses_pages_directory``) is only turned off by the first ``st.navigation`` call. Turn it off;
    True when it was on (the caller reruns, so that app.py runs and routes the link)."""
    if PagesManager.uses_pages_directory and st.runtime.exists():
        PagesManager.uses_pages_directory = False
        return True
    return False


def typed_array(values) -> dict:
    """A numpy array in plotly's base64 form (``{"dtype", "bdata", "shape"}``), as ``Figure.to_dict`` writes it:
    ``_plotly_utils.utils.to_typed_array_spec``."""
    return to_typed_array_spec(values)


class ReadyFigure(go.Figure):
    """A figure as the browser gets it: its dict, built once and kept. ``st.plotly_chart`` takes a plotly Figure and
    reads it with ``to_dict``; a Figure built from a dict, even unvalidated, runs plotly's property machinery over
    every key (2-10 ms a figure here), so this one skips ``go.Figure.__init__``, holds the dict and hands out copies.
    Nothing else of a Figure works on it."""

    def __init__(self, spec: dict):             # (go.Figure.__init__ is what this skips)
        object.__setattr__(self, "_spec", spec)

    def to_dict(self) -> dict:
        return copy.deepcopy(self._spec)

    def to_json(self, *args, **kwargs) -> str:
        return plotly.io.to_json(self._spec, *args, validate=False, **kwargs)

    def __repr__(self) -> str:
        return f"ReadyFigure({len(self._spec.get('data', ()))} traces)"

    @property
    def spec(self) -> dict[str, Any]:
        """The dict itself (not a copy): read it, never change it."""
        return self._spec


def figure_parts(fig) -> tuple[list, dict] | None:
    """The trace dicts and the layout dict a plotly ``BaseFigure`` keeps its properties in (``_data``,
    ``_layout``: read, never copied), or None for anything else."""
    if isinstance(fig, go.Figure) and not isinstance(fig, ReadyFigure):
        return fig._data, fig._layout
    return None


def front_end_inline_scripts() -> tuple[str, ...]:
    """The CSP hashes (``sha256-…``) of the inline scripts in Streamlit's page (``streamlit/static/index.html``,
    one in 1.67: ``window.prerenderReady = false``), so a Content-Security-Policy can allow them and no other."""
    page = (files("streamlit") / "static" / "index.html").read_text(encoding="utf-8")
    bodies = re.findall(r"<script(?![^>]*\bsrc=)[^>]*>(.*?)</script>", page, flags=re.S)
    return tuple("sha256-" + base64.b64encode(hashlib.sha256(b.encode()).digest()).decode() for b in bodies)



_kept = threading.local()


def _plotly_chart_id(*args, **kwargs):
    if getattr(_kept, "figures", None) is not None and kwargs.get("user_key"):
        kwargs["key_as_main_identity"] = True
    return _plotly_chart_id.original(*args, **kwargs)


_plotly_chart_id.original = st_plotly_chart.compute_and_register_element_id
st_plotly_chart.compute_and_register_element_id = _plotly_chart_id


@contextlib.contextmanager
def charts_kept_by_key():
    """Inside, ``st.plotly_chart(..., key=k)`` gives the chart the same element id on every run, whatever its
    figure; yields {key: the figure sent, as JSON} (``kept_key`` fills it). Streamlit hashes the figure into a
    chart's id (``streamlit.elements.plotly_chart`` calls ``compute_and_register_element_id`` with
    ``key_as_main_identity=False``), so a new figure is a new element: the browser throws the old chart away and
    plotly.js draws the new one from nothing, an empty box meanwhile (Live training's view, redrawn every tick:
    an empty chart in 4 screenshots of 25, and most of a core of the browser's time). With one id per key the chart
    stays, but Streamlit's front end keeps drawing its first figure: the figures are sent again to
    ``web/live.mjs``, which hands each to plotly.js's ``react`` on the chart that is there. Per thread: other
    sessions' runs are untouched."""
    before = getattr(_kept, "figures", None)
    _kept.figures = {}
    try:
        yield _kept.figures
    finally:
        _kept.figures = before


def kept_key(key: str, figure) -> str:
    """The key to draw ``figure`` under: ``key`` itself, except inside ``charts_kept_by_key``, where it is ``key``
    and a digest of the figure's structure (its layout but its description, and its traces' kinds and names), and
    the figure is remembered under it. A chart whose structure is unchanged keeps its element from run to run; a
    new structure (the first step's layout, another layer, theme or language, a legend moved off the curves) is a
    new chart, drawn from its own figure: the front end keeps the first figure it drew under an id and draws it
    again whenever that chart is mounted anew, so two structures must never share one."""
    figures = getattr(_kept, "figures", None)
    if figures is None:
        return key
    spec = figure.spec if isinstance(figure, ReadyFigure) else figure.to_dict()
    layout = {k: v for k, v in spec.get("layout", {}).items() if k != "meta"}   # (meta: the figure in words)
    structure = [layout, [(t.get("type"), t.get("name")) for t in spec.get("data", ())]]
    digest = hashlib.sha1(json.dumps(structure, sort_keys=True, default=str).encode()).hexdigest()[:10]
    figures[f"{key}-{digest}"] = figure.to_json()
    return f"{key}-{digest}"


def loading_uvicorn_config():
    """The ``uvicorn.Config`` that is importing the app right now, or None. ``streamlit run`` of an ``st.App``
    hands uvicorn the app as an import string; ``Config.load`` imports it (this module's caller, ``app.py``)
    after choosing the HTTP protocol and before wrapping the app in its proxy-headers middleware, and the server
    reads both only after ``load`` returns, so a change made during the import is the one the server uses. Found
    up the call stack (``Config.load``'s ``self``)."""
    frame = sys._getframe(1)
    while frame is not None:
        candidate = frame.f_locals.get("self")
        if isinstance(candidate, uvicorn.Config) and not candidate.loaded:
            return candidate
        frame = frame.f_back
    return None
