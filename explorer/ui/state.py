"""Session state shared between pages.

Streamlit deletes a widget's state when a run does not draw that widget (e.g. after switching
page). Re-saving the shared keys at the top of every run keeps them, so the bandwidth chosen on one
page is still there on the next.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import streamlit as st
from streamlit.errors import StreamlitAPIException

from ..i18n import LANGUAGES, Message, Phrase
from ..lessons.params import SWITCH
from ..outside import markdown_text
from .internals import leave_pages_directory_mode, rerun_of_parts

KEEP = "ui.keep"      # the state keys kept across pages: every visited lesson page adds its settings' keys


def init_state(defaults: Mapping[str, Any]) -> None:
    """Put defaults into session state for keys that have no value yet."""
    for key, value in defaults.items():
        if key not in st.session_state:
            st.session_state[key] = value


def lecture_mode() -> bool:
    return bool(st.session_state.get("ui.lecture", False))


def predict_mode() -> bool:
    """Whether figures that answer a question wait until the viewer has predicted the answer."""
    return bool(st.session_state.get("ui.predict", False))


ROOM = "ui.room_above"   # {what: px}: rows drawn on this run above where a page's main figure goes (lecture mode)
ROOM_FOR = "ui.room_for"  # {figure: px}: the rows above each main figure on the last whole run


def take_room(what: str, px: int) -> None:
    """Say that a row of ``px`` px (a revealed answer's verdict, the class's result) is drawn above the main figure
    on this run: in lecture mode the main figure is made that much shorter, so that it stays on a 720 px screen.
    Kept until the next whole run of the page (``clear_room``), so a part of the page rerun alone keeps it."""
    st.session_state.setdefault(ROOM, {})[what] = px


def room_taken() -> int:
    """px taken above the main figure on this run (``take_room``)."""
    return sum(st.session_state.get(ROOM, {}).values())


def room_above(figure: str) -> int:
    """px drawn above the main figure ``figure``: on a whole run, the rows taken so far on it (a verdict drawn after
    the figure, further down the page, does not count), remembered for the figure; on a part of the page rerun
    alone (a drag of its slider), what was remembered, so that the figure keeps its height."""
    kept = st.session_state.setdefault(ROOM_FOR, {})
    if not rerun_of_parts():
        kept[figure] = room_taken()
    return kept.get(figure, 0)


def clear_room() -> None:
    st.session_state[ROOM] = {}


def lecture_changed() -> None:
    """Turning lecture mode on or off turns "Predict first" with it (the viewer can still switch it back)."""
    st.session_state["ui.predict"] = st.session_state["ui.lecture"]


def lang() -> str:
    """The session's UI language (``en`` or ``zh``)."""
    return st.session_state.get("ui.lang", "en")


def tr(key: str, **values) -> Phrase:
    """UI text in the session's language (a ``Phrase``: a str that can be said in the other languages too), as
    Markdown: a value from outside the app (``explorer.outside.Outside``) is escaped, shown as the text it is."""
    return Phrase(key, lang(), quote=markdown_text, **values)


def say(text_or_error: Any) -> str:
    """A sentence from the ``explorer`` package in the page's language: a ``Message`` (or an error carrying
    one) is translated, as Markdown in which the text it quotes from outside the app is escaped; anything else (a
    programmer's ValueError) is shown as written."""
    message = getattr(text_or_error, "message", text_or_error)
    return message.in_lang(lang(), markdown_text) if isinstance(message, Message) else str(text_or_error)


def _leave_pages_directory_mode() -> None:
    """A fresh server whose first request is a link to a page (``/masking``) runs that page's script on its
    own, the old pages/-directory way, because the process-wide switch Streamlit keeps for it is only turned
    off by the first ``st.navigation`` call (app.py's): no page config, no language control, a flat nav.
    Turn the switch off and rerun, so app.py runs and routes the link."""
    if leave_pages_directory_mode():
        st.rerun()


def keep_shared_state() -> None:
    """Stop Streamlit from dropping any page's settings between pages, and set the app-wide ones.

    Streamlit forgets a widget's value when a run does not draw it; re-saving the value of every setting in
    ``st.session_state[KEEP]`` (the shared ones and each visited page's own, added by ``page.lesson_page``) keeps
    it, so a page shows what it showed when the viewer comes back. Call it once per run, before any widget is
    drawn (app.py does; so does each page, so that a page also works when run on its own, as in the AppTest
    suite). It imports no compute code: the router and the landing page call it before torch is loaded.
    """
    _leave_pages_directory_mode()
    if "ui.lecture" not in st.session_state:             # ?lecture=1 turns lecture mode on
        st.session_state["ui.lecture"] = SWITCH.get(st.query_params.get("lecture", "0").lower(), False)
    if "ui.predict" not in st.session_state:             # ?predict=1 / 0; by default on in lecture mode
        asked = st.query_params.get("predict")
        st.session_state["ui.predict"] = SWITCH[asked.lower()] if asked and asked.lower() in SWITCH else \
            st.session_state["ui.lecture"]
    if "ui.lang" not in st.session_state:                # ?lang=zh switches to Chinese
        st.session_state["ui.lang"] = st.query_params.get("lang", "en") if st.query_params.get("lang") in LANGUAGES \
            else "en"
    kept = sorted(k for k in st.session_state.get(KEEP, ()) if k in st.session_state)
    for key in ("ui.lecture", "ui.predict", "ui.lang", *kept):
        try:
            st.session_state[key] = st.session_state[key]
        except StreamlitAPIException:       # its widget is already drawn in this run (app.py's sidebar)
            pass
