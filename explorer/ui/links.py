"""A page's settings in its address: read once per session from a shared link, written back on every run.

Light (no torch): the landing page keeps lecture mode and the language in its address too.
"""

from __future__ import annotations

from collections.abc import Sequence

import streamlit as st

from ..i18n import LANGUAGES, Joined
from ..lessons.params import SWITCH, Param
from ..outside import Outside
from .state import tr

LINK_ECHO = 40          # characters of a link's key, and of its value, said back when they are ignored
LINK_ECHO_ITEMS = 5     # ignored settings listed by name (the rest are counted)


def restore(params: Sequence[Param], page: str) -> None:
    """Copy valid URL values into session state, once per session and page; say which were left out."""
    flag = f"url.restored.{page}"
    if st.session_state.get(flag):
        return
    st.session_state[flag] = True
    ignored, refusals = [], []
    by_key = {p.key: p for p in params}
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
            ignored.append(Outside(f"{Outside(key, LINK_ECHO)}={Outside(raw, LINK_ECHO)}", limit=3 * LINK_ECHO))
    if ignored:                # said as text, not Markdown: the link is anyone's (``explorer.outside``)
        more = [tr("ui.url_more", n=len(ignored) - LINK_ECHO_ITEMS)] if len(ignored) > LINK_ECHO_ITEMS else []
        st.warning(tr("ui.url_ignored", bad=Joined([*ignored[:LINK_ECHO_ITEMS], *more])))
    for text in dict.fromkeys(refusals):
        st.info(tr(text))


# what a link may say besides the page's controls (app-wide settings, read by ``state.keep_shared_state``)
LINK_SETTINGS = {"lecture": tuple(SWITCH), "predict": tuple(SWITCH), "lang": LANGUAGES}


def publish(params: Sequence[Param]) -> None:
    """Write the current values into the URL (plus lecture mode and language), so the address can be shared."""
    values = {p.key: p.dump(st.session_state[p.key]) for p in params if p.key in st.session_state}
    if st.session_state.get("ui.lecture"):
        values["lecture"] = "1"
    if st.session_state.get("ui.predict", False) != st.session_state.get("ui.lecture", False):
        values["predict"] = "1" if st.session_state.get("ui.predict") else "0"       # only when not the default
    if st.session_state.get("ui.lang", "en") != "en":
        values["lang"] = st.session_state["ui.lang"]
    if dict(st.query_params) != values:
        st.query_params.from_dict(values)


